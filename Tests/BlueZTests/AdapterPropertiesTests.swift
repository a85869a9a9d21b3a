import BlueZ
import DBus
import Testing

@Suite struct AdapterPropertiesTests {
    @Test func decodesThe566Payload() throws {
        let adapter = try AdapterProperties(properties: Fixture.adapter())
        #expect(adapter.address == (try BluetoothAddress("00:1A:7D:DA:71:13")))
        #expect(adapter.addressType == .public)
        #expect(adapter.name == "host")
        #expect(adapter.alias == "host")
        #expect(adapter.deviceClass == 0x6c_010c)
        #expect(adapter.powered)
        #expect(!adapter.discoverable)
        #expect(adapter.discoverableTimeout == 180)
        #expect(adapter.pairable)
        #expect(adapter.pairableTimeout == 0)
        #expect(!adapter.discovering)
        #expect(adapter.uuids.count == 2)
        #expect(adapter.modalias == "usb:v1D6Bp0246d0542")
        #expect(adapter.roles == ["central", "peripheral"])
        #expect(adapter.powerState == nil)
        #expect(adapter.connectable == nil)
        #expect(adapter.manufacturer == nil)
        #expect(adapter.version == nil)
        #expect(adapter.experimentalFeatures == nil)
    }

    @Test func decodesThe587Additions() throws {
        var payload = Fixture.adapter()
        payload["Connectable"] = .variant(.boolean(true))
        payload["PowerState"] = .variant(.string("on"))
        payload["Manufacturer"] = .variant(.uint16(2))
        payload["Version"] = .variant(.byte(0x0C))
        payload["ExperimentalFeatures"] = .variant(Fixture.strings(["d4992530-b9ec-469f-ab01-6c481c47da1c"]))
        let adapter = try AdapterProperties(properties: payload)
        #expect(adapter.connectable == true)
        #expect(adapter.powerState == .on)
        #expect(adapter.manufacturer == 2)
        #expect(adapter.version == 0x0C)
        #expect(adapter.experimentalFeatures?.count == 1)
    }

    @Test func acceptsUnwrappedValuesAndIgnoresUnknownProperties() throws {
        var payload = Fixture.adapter().mapValues(\.unwrapped)
        payload["SomethingFrom5_99"] = .variant(.int64(7))
        let adapter = try AdapterProperties(properties: payload)
        #expect(adapter.name == "host")
    }

    @Test(arguments: [
        "Address", "AddressType", "Name", "Alias", "Class", "Powered", "Discoverable", "DiscoverableTimeout",
        "Pairable", "PairableTimeout", "Discovering", "UUIDs", "Roles",
    ])
    func requiredPropertyMissingThrows(_ key: String) {
        var payload = Fixture.adapter()
        payload[key] = nil
        let error = #expect(throws: DBusError.self) { try AdapterProperties(properties: payload) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.message == "org.bluez.Adapter1.\(key): required property is missing")
    }

    @Test(arguments: [
        ("Class", DBusValue.uint16(1), "expected u, got q"),
        ("Powered", .string("yes"), "expected b, got s"),
        ("DiscoverableTimeout", .int32(180), "expected u, got i"),
        ("UUIDs", .array(.objectPath, []), "expected as, got ao"),
        ("Manufacturer", .uint32(2), "expected q, got u"),
        ("Version", .uint16(12), "expected y, got q"),
        ("PowerState", .boolean(true), "expected s, got b"),
        ("Powered", .variant(.boolean(true)), "expected b, got v"),
    ])
    func wrongTypeThrows(_ key: String, _ value: DBusValue, _ detail: String) {
        var payload = Fixture.adapter()
        payload[key] = .variant(value)
        let error = #expect(throws: DBusError.self) { try AdapterProperties(properties: payload) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.message == "org.bluez.Adapter1.\(key): \(detail)")
    }

    @Test func malformedAddressThrows() {
        var payload = Fixture.adapter()
        payload["Address"] = .variant(.string("not an address"))
        let error = #expect(throws: DBusError.self) { try AdapterProperties(properties: payload) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.message.hasPrefix("org.bluez.Adapter1.Address: ") == true)
    }

    @Test func appliesChanges() throws {
        var adapter = try AdapterProperties(properties: Fixture.adapter())
        try adapter.apply(changed: ["Discovering": .variant(.boolean(true))], invalidated: [])
        #expect(adapter.discovering)
        try adapter.apply(
            changed: ["Powered": .variant(.boolean(false)), "PowerState": .variant(.string("off-blocked"))],
            invalidated: [])
        #expect(!adapter.powered)
        #expect(adapter.powerState == .offBlocked)
        try adapter.apply(changed: [:], invalidated: ["PowerState", "Modalias", "NeverHeardOf"])
        #expect(adapter.powerState == nil)
        #expect(adapter.modalias == nil)
    }

    @Test func invalidatingARequiredPropertyIsIgnored() throws {
        var adapter = try AdapterProperties(properties: Fixture.adapter())
        try adapter.apply(changed: [:], invalidated: ["Powered", "Address"])
        #expect(adapter.powered)
        #expect(adapter.address == (try BluetoothAddress("00:1A:7D:DA:71:13")))
    }

    @Test func aBadChangeLeavesThePropertiesUntouched() throws {
        let original = try AdapterProperties(properties: Fixture.adapter())
        var adapter = original
        let error = #expect(throws: DBusError.self) {
            try adapter.apply(
                changed: ["Discovering": .variant(.boolean(true)), "Powered": .variant(.uint32(0))],
                invalidated: ["Modalias"])
        }
        #expect(error?.message == "org.bluez.Adapter1.Powered: expected b, got u")
        #expect(adapter == original)
    }

    @Test func encodesWithTheTableTypes() throws {
        let payload = Fixture.adapter()
        let adapter = try AdapterProperties(properties: payload)
        #expect(adapter.dbusProperties == payload.mapValues(\.unwrapped))
        #expect(try AdapterProperties(properties: adapter.dbusProperties) == adapter)
        var full = adapter
        full.powerState = .on
        full.manufacturer = 0x5F
        full.version = 12
        full.connectable = true
        let encoded = full.dbusProperties
        #expect(encoded["PowerState"] == .string("on"))
        #expect(encoded["Manufacturer"]?.type == .uint16)
        #expect(encoded["Version"]?.type == .byte)
        #expect(encoded["Class"]?.type == .uint32)
        #expect(try AdapterProperties(properties: encoded) == full)
    }
}
