import BlueZ
import DBus
import Foundation
import Testing

@Suite struct AdvertisingManagerPropertiesTests {
    @Test func decodesThe566Shape() throws {
        let manager = try LEAdvertisingManagerProperties(
            properties: Fixture.variants([
                "ActiveInstances": .byte(0), "SupportedInstances": .byte(5),
                "SupportedIncludes": Fixture.strings(["tx-power", "appearance", "local-name"]),
            ]))
        #expect(manager.activeInstances == 0)
        #expect(manager.supportedInstances == 5)
        #expect(manager.supportedIncludes == ["tx-power", "appearance", "local-name"])
        #expect(manager.supportedFeatures == nil)
        #expect(manager.supportedCapabilities == nil)
    }

    @Test func decodesCapabilities() throws {
        let payload = Fixture.variants([
            "ActiveInstances": .byte(1), "SupportedInstances": .byte(4), "SupportedIncludes": Fixture.strings([]),
            "SupportedSecondaryChannels": Fixture.strings(["1M", "2M", "Coded"]),
            "SupportedFeatures": Fixture.strings(["CanSetTxPower", "HardwareOffload"]),
            "SupportedCapabilities": ObjectManagerCoding.encodeProperties([
                "MaxAdvLen": .byte(251), "MaxScnRspLen": .byte(251), "MinTxPower": .int16(-34),
                "MaxTxPower": .int16(10), "Future": .string("x"),
            ]),
        ])
        let manager = try LEAdvertisingManagerProperties(properties: payload)
        let capabilities = try #require(manager.supportedCapabilities)
        #expect(capabilities.maxAdvertisingDataLength == 251)
        #expect(capabilities.maxScanResponseLength == 251)
        #expect(capabilities.minTxPower == -34)
        #expect(capabilities.maxTxPower == 10)
        #expect(capabilities.other == ["Future": .string("x")])
        #expect(manager.supportedSecondaryChannels == ["1M", "2M", "Coded"])
        #expect(manager.dbusProperties == payload.mapValues(\.unwrapped))
    }

    @Test func capabilityTypesAreChecked() {
        let payload = Fixture.variants([
            "ActiveInstances": .byte(1), "SupportedInstances": .byte(4), "SupportedIncludes": Fixture.strings([]),
            "SupportedCapabilities": ObjectManagerCoding.encodeProperties(["MaxAdvLen": .uint16(251)]),
        ])
        let error = #expect(throws: DBusError.self) { try LEAdvertisingManagerProperties(properties: payload) }
        #expect(
            error?.message == "org.bluez.LEAdvertisingManager1.SupportedCapabilities.MaxAdvLen: expected y, got q")
    }

    @Test func countsChange() throws {
        var manager = LEAdvertisingManagerProperties(supportedInstances: 5)
        try manager.apply(
            changed: ["ActiveInstances": .variant(.byte(1)), "SupportedInstances": .variant(.byte(4))], invalidated: [])
        #expect(manager.activeInstances == 1)
        #expect(manager.supportedInstances == 4)
        let error = #expect(throws: DBusError.self) {
            try manager.apply(changed: ["ActiveInstances": .variant(.uint32(2))], invalidated: [])
        }
        #expect(error?.message == "org.bluez.LEAdvertisingManager1.ActiveInstances: expected y, got u")
    }

    @Test(arguments: ["ActiveInstances", "SupportedInstances", "SupportedIncludes"])
    func requiredPropertyMissingThrows(_ key: String) {
        var payload = Fixture.variants([
            "ActiveInstances": .byte(0), "SupportedInstances": .byte(5), "SupportedIncludes": Fixture.strings([]),
        ])
        payload[key] = nil
        #expect(throws: DBusError.self) { try LEAdvertisingManagerProperties(properties: payload) }
    }
}

@Suite struct AdvertisementPropertiesTests {
    @Test func decodesAnAdvertisement() throws {
        let payload = Fixture.variants([
            "Type": .string("peripheral"),
            "ServiceUUIDs": Fixture.strings(["180D"]),
            "ManufacturerData": Fixture.manufacturerData([(0xFFFF, [0x01, 0x02])]),
            "ServiceData": Fixture.serviceData([("9999", [0x03])]),
            "Data": Fixture.advertisingData([(0x26, [0x01])]),
            "Discoverable": .boolean(true), "DiscoverableTimeout": .uint16(30),
            "Includes": Fixture.strings(["tx-power"]), "LocalName": .string("swift-ble"),
            "Appearance": .uint16(0x0340), "Duration": .uint16(2), "Timeout": .uint16(60),
            "SecondaryChannel": .string("2M"), "MinInterval": .uint32(100), "MaxInterval": .uint32(200),
            "TxPower": .int16(-4), "Instance": .byte(0),
        ])
        let advertisement = try LEAdvertisementProperties(properties: payload)
        #expect(advertisement.type == .peripheral)
        #expect(advertisement.serviceUUIDs == ["180D"])
        #expect(advertisement.manufacturerData == [0xFFFF: Data([0x01, 0x02])])
        #expect(advertisement.serviceData == ["9999": Data([0x03])])
        #expect(advertisement.data == [0x26: Data([0x01])])
        #expect(advertisement.discoverable == true)
        #expect(advertisement.discoverableTimeout == 30)
        #expect(advertisement.localName == "swift-ble")
        #expect(advertisement.minInterval == 100)
        #expect(advertisement.txPower == -4)
        #expect(advertisement.instance == 0)
        #expect(advertisement.dbusProperties == payload.mapValues(\.unwrapped))
    }

    @Test func scanResponseProperties() throws {
        var advertisement = LEAdvertisementProperties(type: .broadcast)
        advertisement.scanResponseServiceUUIDs = ["180F"]
        advertisement.scanResponseManufacturerData = [0x004C: Data([1])]
        advertisement.scanResponseSolicitUUIDs = []
        advertisement.scanResponseServiceData = ["180F": Data([0x64])]
        advertisement.scanResponseData = [0x09: Data("x".utf8)]
        let encoded = advertisement.dbusProperties
        #expect(encoded["ScanResponseManufacturerData"]?.type == .dictionary(key: .uint16, value: .variant))
        #expect(encoded["ScanResponseData"]?.type == .dictionary(key: .byte, value: .variant))
        #expect(try LEAdvertisementProperties(properties: encoded) == advertisement)
    }

    @Test func typeIsRequired() {
        let error = #expect(throws: DBusError.self) {
            try LEAdvertisementProperties(properties: Fixture.variants(["LocalName": .string("x")]))
        }
        #expect(error?.message == "org.bluez.LEAdvertisement1.Type: required property is missing")
    }

    @Test(arguments: [
        ("ManufacturerData", Fixture.serviceData([("76", [1])]), "expected a{qv}, got a{sv}"),
        (
            "ManufacturerData", DBusValue.dictionary(key: .int16, value: .variant, []),
            "expected a{qv}, got a{nv}"
        ),
        ("TxPower", .int32(-4), "expected n, got i"),
        ("MinInterval", .uint16(100), "expected u, got q"),
        ("Timeout", .uint32(60), "expected q, got u"),
        ("Data", Fixture.serviceData([]), "expected a{yv}, got a{sv}"),
    ])
    func wrongTypeThrows(_ key: String, _ value: DBusValue, _ detail: String) {
        var payload = Fixture.variants(["Type": .string("peripheral")])
        payload[key] = .variant(value)
        let error = #expect(throws: DBusError.self) { try LEAdvertisementProperties(properties: payload) }
        #expect(error?.message == "org.bluez.LEAdvertisement1.\(key): \(detail)")
    }

    @Test func liveUpdates() throws {
        var advertisement = LEAdvertisementProperties(type: .peripheral)
        try advertisement.apply(
            changed: ["LocalName": .variant(.string("new")), "Instance": .variant(.byte(3))], invalidated: [])
        #expect(advertisement.localName == "new")
        #expect(advertisement.instance == 3)
        try advertisement.apply(changed: [:], invalidated: ["LocalName", "Type"])
        #expect(advertisement.localName == nil)
        #expect(advertisement.type == .peripheral)
        #expect(advertisement.dbusProperties == ["Type": .string("peripheral"), "Instance": .byte(3)])
    }
}
