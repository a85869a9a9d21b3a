import BlueZ
import DBus
import Foundation
import Testing

/// The scan's partial decode of `Device1` agrees with the full one on every field it reads.
@Suite struct DeviceAdvertisementTests {
    @Test func readsWhatTheFullDecodeReads() throws {
        var payload = Fixture.device()
        payload["ManufacturerData"] = .variant(Fixture.manufacturerData([(0x004C, [0x02, 0x15]), (0x0059, [])]))
        payload["TxPower"] = .variant(.int16(-8))
        payload["Appearance"] = .variant(.uint16(0x0340))
        payload["AdvertisingFlags"] = .variant(.bytes(Data([0x06])))
        let entry = DBusDictionaryEntry(.byte(0x26), .variant(.bytes(Data([1, 2]))))
        payload["AdvertisingData"] = .variant(.dictionary(key: .byte, value: .variant, [entry]))
        let full = try DeviceProperties(properties: payload)
        let advertised = try DeviceAdvertisement(properties: payload)
        #expect(advertised.address == full.address)
        #expect(advertised.addressType == full.addressType && advertised.addressType != nil)
        #expect(advertised.advertisingFlags == Data([0x06]))
        #expect(advertised.advertisingData == [0x26: Data([1, 2])])
        #expect(advertised.serviceData != nil)
        #expect(advertised.rssi == -71)
        #expect(advertised.name == "Flower care")
        #expect(advertised.uuids == full.uuids)
        #expect(advertised.manufacturerData == [0x004C: Data([0x02, 0x15]), 0x0059: Data()])
        #expect(advertised.serviceData == full.serviceData)
        #expect(advertised.txPower == -8)
        #expect(advertised.appearance == 0x0340)
    }

    @Test func anAdvertiserWithoutRSSIOrDataDecodes() throws {
        var payload = Fixture.device()
        for key in ["RSSI", "Name", "ServiceData", "ManufacturerData", "TxPower", "Appearance"] { payload[key] = nil }
        let advertised = try DeviceAdvertisement(properties: payload)
        #expect(advertised.rssi == nil && advertised.name == nil && advertised.serviceData == nil)
        #expect(advertised.manufacturerData == nil && advertised.txPower == nil && advertised.appearance == nil)
    }

    @Test(arguments: ["Address", "UUIDs"])
    func aMissingAddressOrUUIDListThrows(_ key: String) {
        var payload = Fixture.device()
        payload[key] = nil
        let error = #expect(throws: DBusError.self) { try DeviceAdvertisement(properties: payload) }
        #expect(error?.message == "org.bluez.Device1.\(key): required property is missing")
    }

    /// Every property the decode reads, each with a value of the wrong type: the decode must
    /// find each one by its name (it tells names apart by their length first) to refuse it.
    @Test(arguments: [
        ("RSSI", DBusValue.int32(-71)), ("Address", .string("not an address")), ("Name", .uint32(1)),
        ("ManufacturerData", .bytes(Data([1]))), ("UUIDs", .string("180D")), ("AddressType", .uint32(0)),
        ("TxPower", .int32(-8)), ("Appearance", .int16(1)), ("ServiceData", .bytes(Data([1]))),
        ("AdvertisingFlags", .string("06")), ("AdvertisingData", .bytes(Data([1]))),
        (
            "ManufacturerData",
            .dictionary(key: .string, value: .variant, [DBusDictionaryEntry(.string("76"), .variant(.bytes(Data())))])
        ),
        (
            "ManufacturerData",
            .dictionary(key: .uint16, value: .variant, [DBusDictionaryEntry(.uint16(76), .variant(.uint32(1)))])
        ),
    ])
    func aValueOfAnotherTypeThrows(_ key: String, _ value: DBusValue) {
        var payload = Fixture.device()
        payload[key] = .variant(value)
        let error = #expect(throws: DBusError.self) { try DeviceAdvertisement(properties: payload) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.message.hasPrefix("org.bluez.Device1.\(key):") == true)
    }

    @Test func theTreeAnswersForDevicesOnly() throws {
        let device = try Fixture.path("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22")
        var tree = BlueZObjectTree()
        _ = tree.apply(.interfacesAdded(device, [BlueZInterface.device1: Fixture.device()]))
        #expect(try tree.advertisement(at: device)?.rssi == -71)
        #expect(try tree.advertisement(at: try Fixture.path(Fixture.adapterText)) == nil)
    }
}
