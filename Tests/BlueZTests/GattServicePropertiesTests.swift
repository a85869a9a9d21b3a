import BlueZ
import DBus
import Testing

@Suite struct GattServicePropertiesTests {
    @Test func decodesA566RemoteService() throws {
        let device = try Fixture.path(Fixture.deviceText)
        let path = try BlueZPath.service(handle: 0x0020, device: device)
        let service = try GattServiceProperties(properties: Fixture.service(device: device))
        #expect(service.uuid == "00001a00-0000-1000-8000-00805f9b34fb")
        #expect(service.primary)
        #expect(service.device == device)
        #expect(service.includes == [])
        #expect(service.handle == nil)
        // 5.66 has no Handle: it comes from the path.
        #expect(service.resolvedHandle(path: path) == 0x0020)
    }

    @Test func handleWinsOverThePath() throws {
        let device = try Fixture.path(Fixture.deviceText)
        var payload = Fixture.service(device: device)
        payload["Handle"] = .variant(.uint16(0x0030))
        let service = try GattServiceProperties(properties: payload)
        #expect(service.resolvedHandle(path: try BlueZPath.service(handle: 0x0020, device: device)) == 0x0030)
    }

    @Test func decodesAnExportedService() throws {
        let service = try GattServiceProperties(
            properties: Fixture.variants([
                "UUID": .string("0000180d-0000-1000-8000-00805f9b34fb"), "Primary": .boolean(true),
            ]))
        #expect(service.device == nil)
        #expect(service.includes == nil)
        #expect(service.dbusProperties.keys.sorted() == ["Primary", "UUID"])
        #expect(service.resolvedHandle(path: try Fixture.path("/com/example/app/service0")) == nil)
    }

    @Test(arguments: ["UUID", "Primary"])
    func requiredPropertyMissingThrows(_ key: String) throws {
        var payload = Fixture.service(device: try Fixture.path(Fixture.deviceText))
        payload[key] = nil
        let error = #expect(throws: DBusError.self) { try GattServiceProperties(properties: payload) }
        #expect(error?.message == "org.bluez.GattService1.\(key): required property is missing")
    }

    @Test(arguments: [
        ("Handle", DBusValue.uint32(1), "expected q, got u"),
        ("Includes", .array(.string, []), "expected ao, got as"),
        ("Device", .string("/x"), "expected o, got s"),
        ("Primary", .byte(1), "expected b, got y"),
    ])
    func wrongTypeThrows(_ key: String, _ value: DBusValue, _ detail: String) throws {
        var payload = Fixture.service(device: try Fixture.path(Fixture.deviceText))
        payload[key] = .variant(value)
        let error = #expect(throws: DBusError.self) { try GattServiceProperties(properties: payload) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.message == "org.bluez.GattService1.\(key): \(detail)")
    }

    @Test func appliesIncludesChanges() throws {
        let device = try Fixture.path(Fixture.deviceText)
        let other = try BlueZPath.service(handle: 0x0040, device: device)
        var service = try GattServiceProperties(properties: Fixture.service(device: device))
        try service.apply(changed: ["Includes": .variant(Fixture.paths([other]))], invalidated: [])
        #expect(service.includes == [other])
        try service.apply(changed: [:], invalidated: ["Includes", "UUID"])
        #expect(service.includes == nil)
        #expect(service.uuid == "00001a00-0000-1000-8000-00805f9b34fb")
    }

    @Test func roundTrips() throws {
        let device = try Fixture.path(Fixture.deviceText)
        let payload = Fixture.service(device: device)
        let service = try GattServiceProperties(properties: payload)
        #expect(service.dbusProperties == payload.mapValues(\.unwrapped))
        let full = GattServiceProperties(uuid: "180f", primary: false, device: device, includes: [device], handle: 7)
        #expect(try GattServiceProperties(properties: full.dbusProperties) == full)
        #expect(full.dbusProperties["Handle"] == .uint16(7))
    }
}
