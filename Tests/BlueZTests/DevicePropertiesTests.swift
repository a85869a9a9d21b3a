import BlueZ
import DBus
import Foundation
import Testing

@Suite struct DevicePropertiesTests {
    @Test func decodesThe12Payload() throws {
        let device = try DeviceProperties(properties: Fixture.device())
        #expect(device.address == (try BluetoothAddress("C4:7C:8D:6A:11:22")))
        #expect(device.addressType == .public)
        #expect(device.name == "Flower care")
        #expect(device.alias == "Flower care")
        #expect(device.rssi == -71)
        #expect(device.txPower == nil)
        #expect(device.bonded == false)
        #expect(!device.connected && !device.servicesResolved && !device.paired)
        #expect(device.uuids == ["0000fe95-0000-1000-8000-00805f9b34fb"])
        #expect(device.adapter == (try Fixture.path(Fixture.adapterText)))
        #expect(device.serviceData == ["0000fe95-0000-1000-8000-00805f9b34fb": Data([0x71, 0x20, 0x98, 0x00])])
        #expect(device.manufacturerData == nil)
        #expect(!device.hasPrivateAddress)
    }

    @Test func decodesAdvertisingFields() throws {
        var payload = Fixture.device()
        payload["ManufacturerData"] = .variant(Fixture.manufacturerData([(0x004C, [0x02, 0x15]), (0x0059, [])]))
        payload["TxPower"] = .variant(.int16(-8))
        payload["Appearance"] = .variant(.uint16(0x0340))
        payload["AdvertisingFlags"] = .variant(.bytes(Data([0x06])))
        payload["AdvertisingData"] = .variant(Fixture.advertisingData([(0x26, [0x01, 0x02])]))
        payload["Class"] = .variant(.uint32(0x240404))
        payload["Icon"] = .variant(.string("audio-card"))
        payload["CablePairing"] = .variant(.boolean(false))
        payload["WakeAllowed"] = .variant(.boolean(true))
        payload["PreferredBearer"] = .variant(.string("le"))
        let device = try DeviceProperties(properties: payload)
        #expect(device.manufacturerData == [0x004C: Data([0x02, 0x15]), 0x0059: Data()])
        #expect(device.txPower == -8)
        #expect(device.appearance == 0x0340)
        #expect(device.advertisingFlags == Data([0x06]))
        #expect(device.advertisingData == [0x26: Data([0x01, 0x02])])
        #expect(device.deviceClass == 0x240404)
        #expect(device.icon == "audio-card")
        #expect(device.cablePairing == false)
        #expect(device.wakeAllowed == true)
        #expect(device.preferredBearer == "le")
        #expect(try DeviceProperties(properties: device.dbusProperties) == device)
    }

    @Test func decodesSets() throws {
        var payload = Fixture.device()
        let set = try Fixture.path("/org/bluez/hci0/set_0123")
        payload["Sets"] = .variant(
            .dictionary(
                key: .objectPath, value: .dictionary(key: .string, value: .variant),
                [DBusDictionaryEntry(.objectPath(set), ObjectManagerCoding.encodeProperties(["Rank": .byte(1)]))]))
        let device = try DeviceProperties(properties: payload)
        #expect(device.sets == [set: ["Rank": .byte(1)]])
        #expect(try DeviceProperties(properties: device.dbusProperties) == device)
    }

    @Test(arguments: [
        "Address", "AddressType", "Alias", "Paired", "Trusted", "Blocked", "LegacyPairing", "Connected", "UUIDs",
        "Adapter", "ServicesResolved",
    ])
    func requiredPropertyMissingThrows(_ key: String) {
        var payload = Fixture.device()
        payload[key] = nil
        let error = #expect(throws: DBusError.self) { try DeviceProperties(properties: payload) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.message == "org.bluez.Device1.\(key): required property is missing")
    }

    @Test(arguments: ["Name", "RSSI", "TxPower", "Appearance", "Bonded", "ServiceData", "ManufacturerData", "Icon"])
    func optionalPropertyMayBeMissing(_ key: String) throws {
        var payload = Fixture.device()
        payload[key] = nil
        _ = try DeviceProperties(properties: payload)
    }

    @Test(arguments: [
        ("RSSI", DBusValue.int32(-71), "expected n, got i"),
        ("RSSI", .uint16(71), "expected n, got q"),
        ("TxPower", .byte(4), "expected n, got y"),
        ("Appearance", .int16(1), "expected q, got n"),
        ("Adapter", .string("/org/bluez/hci0"), "expected o, got s"),
        ("UUIDs", .string("180d"), "expected as, got s"),
        ("ManufacturerData", Fixture.serviceData([("76", [1])]), "expected a{qv}, got a{sv}"),
        ("ManufacturerData", .dictionary(key: .uint16, value: .array(.byte), []), "expected a{qv}, got a{qay}"),
        ("ServiceData", Fixture.manufacturerData([(1, [1])]), "expected a{sv}, got a{qv}"),
        ("AdvertisingData", Fixture.manufacturerData([(1, [1])]), "expected a{yv}, got a{qv}"),
        ("AdvertisingFlags", .array(.string, []), "expected ay, got as"),
        ("Sets", .dictionary(key: .string, value: .variant, []), "expected a{oa{sv}}, got a{sv}"),
    ])
    func wrongTypeThrows(_ key: String, _ value: DBusValue, _ detail: String) {
        var payload = Fixture.device()
        payload[key] = .variant(value)
        let error = #expect(throws: DBusError.self) { try DeviceProperties(properties: payload) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.message == "org.bluez.Device1.\(key): \(detail)")
    }

    @Test func byteMapVariantsMustHoldByteArrays() {
        var payload = Fixture.device()
        payload["ManufacturerData"] = .variant(
            .dictionary(key: .uint16, value: .variant, [DBusDictionaryEntry(.uint16(0x4C), .variant(.string("x")))]))
        let error = #expect(throws: DBusError.self) { try DeviceProperties(properties: payload) }
        #expect(error?.message == "org.bluez.Device1.ManufacturerData: expected ay in each variant, got s")

        payload["ManufacturerData"] = .variant(
            .dictionary(
                key: .uint16, value: .variant,
                [DBusDictionaryEntry(.uint16(0x4C), .variant(.variant(.bytes(Data([1])))))]))
        #expect(throws: DBusError.self) { try DeviceProperties(properties: payload) }
    }

    @Test func scanUpdates() throws {
        var device = try DeviceProperties(properties: Fixture.device())
        try device.apply(changed: ["RSSI": .variant(.int16(-60))], invalidated: [])
        #expect(device.rssi == -60)
        // BlueZ always sends the whole accumulated dictionary.
        try device.apply(
            changed: ["ManufacturerData": .variant(Fixture.manufacturerData([(0x004C, [1]), (0x0006, [2, 3])]))],
            invalidated: [])
        #expect(device.manufacturerData == [0x004C: Data([1]), 0x0006: Data([2, 3])])
        try device.apply(changed: ["TxPower": .variant(.int16(4))], invalidated: [])
        // StopDiscovery: `("org.bluez.Device1", {}, ["RSSI", "TxPower"])`.
        try device.apply(changed: [:], invalidated: ["RSSI", "TxPower"])
        #expect(device.rssi == nil)
        #expect(device.txPower == nil)
        #expect(device.manufacturerData?.count == 2)
    }

    @Test func connectionUpdates() throws {
        var device = try DeviceProperties(properties: Fixture.device())
        try device.apply(changed: ["Connected": .variant(.boolean(true))], invalidated: [])
        try device.apply(
            changed: [
                "UUIDs": .variant(Fixture.strings(["00001800-0000-1000-8000-00805f9b34fb"])),
                "ServicesResolved": .variant(.boolean(true)),
            ], invalidated: [])
        #expect(device.connected && device.servicesResolved)
        #expect(device.uuids == ["00001800-0000-1000-8000-00805f9b34fb"])
        // 5.66 disconnect: both properties in one signal.
        try device.apply(
            changed: ["ServicesResolved": .variant(.boolean(false)), "Connected": .variant(.boolean(false))],
            invalidated: [])
        #expect(!device.connected && !device.servicesResolved)
    }

    @Test func aBadChangeLeavesThePropertiesUntouched() throws {
        let original = try DeviceProperties(properties: Fixture.device())
        var device = original
        #expect(throws: DBusError.self) {
            try device.apply(
                changed: ["Connected": .variant(.boolean(true)), "RSSI": .variant(.int32(-1))], invalidated: ["Name"])
        }
        #expect(device == original)
    }

    @Test func ignoresUnknownChangesAndInvalidations() throws {
        let original = try DeviceProperties(properties: Fixture.device())
        var device = original
        try device.apply(changed: ["Bearer": .variant(.string("le"))], invalidated: ["Nonsense", "Connected"])
        #expect(device == original)
    }

    @Test func encodesWithTheTableTypes() throws {
        var payload = Fixture.device()
        payload["ManufacturerData"] = .variant(Fixture.manufacturerData([(0x004C, [0x02])]))
        payload["TxPower"] = .variant(.int16(-8))
        let device = try DeviceProperties(properties: payload)
        let encoded = device.dbusProperties
        #expect(encoded == payload.mapValues(\.unwrapped))
        #expect(encoded["RSSI"]?.type == .int16)
        #expect(encoded["TxPower"]?.type == .int16)
        #expect(encoded["ManufacturerData"]?.type == .dictionary(key: .uint16, value: .variant))
        #expect(encoded["ServiceData"]?.type == .dictionary(key: .string, value: .variant))
        #expect(encoded["Name"] == .string("Flower care"))
        for value in encoded.values { try value.validate() }
    }

    @Test func absentOptionalsAreLeftOut() throws {
        let address = try BluetoothAddress("40:11:22:33:44:55")
        let device = DeviceProperties(
            address: address, addressType: .random, adapter: try Fixture.path("/org/bluez/hci0"))
        #expect(device.alias == "40-11-22-33-44-55")
        #expect(device.hasPrivateAddress)
        let encoded = device.dbusProperties
        for key in ["Name", "RSSI", "TxPower", "ManufacturerData", "ServiceData", "Appearance", "Icon", "Class"] {
            #expect(encoded[key] == nil, "\(key)")
        }
        #expect(encoded["UUIDs"] == .array(.string, []))
        #expect(try DeviceProperties(properties: encoded) == device)
    }
}
