import BlueZ
import DBus
import Foundation
import Testing

@Suite struct GattCharacteristicPropertiesTests {
    let service: ObjectPath

    init() throws {
        service = try Fixture.path(Fixture.deviceText + "/service0020")
    }

    @Test func decodesThe12Characteristic() throws {
        let characteristic = try GattCharacteristicProperties(properties: Fixture.characteristic(service: service))
        #expect(characteristic.uuid == "00001a01-0000-1000-8000-00805f9b34fb")
        #expect(characteristic.service == service)
        #expect(characteristic.value == Data())
        #expect(characteristic.notifying == false)
        #expect(characteristic.flags == [.read, .write, .notify])
        #expect(characteristic.unknownFlags.isEmpty)
        #expect(characteristic.notifyAcquired == false)
        #expect(characteristic.writeAcquired == nil)
        #expect(characteristic.mtu == 247)
        #expect(characteristic.handle == 0x0021)
    }

    @Test func handleFallsBackToThePathOn566() throws {
        let payload = Fixture.characteristic(service: service, handle: nil)
        let characteristic = try GattCharacteristicProperties(properties: payload)
        #expect(characteristic.handle == nil)
        let path = try BlueZPath.characteristic(handle: 0x0021, service: service)
        #expect(characteristic.resolvedHandle(path: path) == 0x0021)
    }

    @Test func keepsUnknownFlags() throws {
        var payload = Fixture.characteristic(service: service)
        payload["Flags"] = .variant(Fixture.strings(["notify", "x-notify", "read", "future-flag"]))
        let characteristic = try GattCharacteristicProperties(properties: payload)
        #expect(characteristic.flags == [.read, .notify])
        #expect(characteristic.unknownFlags == ["x-notify", "future-flag"])
        #expect(characteristic.flagStrings == ["read", "notify", "x-notify", "future-flag"])
        #expect(
            characteristic.dbusProperties["Flags"] == Fixture.strings(["read", "notify", "x-notify", "future-flag"]))
        #expect(try GattCharacteristicProperties(properties: characteristic.dbusProperties) == characteristic)
    }

    @Test func decodesAnExportedCharacteristic() throws {
        let payload = Fixture.variants([
            "UUID": .string("00002a37-0000-1000-8000-00805f9b34fb"), "Service": .objectPath(service),
            "Flags": Fixture.strings(["notify", "encrypt-read", "authorize"]),
        ])
        let characteristic = try GattCharacteristicProperties(properties: payload)
        #expect(characteristic.flags == [.notify, .encryptRead, .authorize])
        #expect(characteristic.value == nil)
        #expect(characteristic.notifying == nil)
        #expect(characteristic.dbusProperties == payload.mapValues(\.unwrapped))
    }

    @Test(arguments: ["UUID", "Service", "Flags"])
    func requiredPropertyMissingThrows(_ key: String) {
        var payload = Fixture.characteristic(service: service)
        payload[key] = nil
        let error = #expect(throws: DBusError.self) { try GattCharacteristicProperties(properties: payload) }
        #expect(error?.message == "org.bluez.GattCharacteristic1.\(key): required property is missing")
    }

    @Test(arguments: [
        ("MTU", DBusValue.uint32(247), "expected q, got u"),
        ("MTU", .int16(247), "expected q, got n"),
        ("Handle", .int32(33), "expected q, got i"),
        ("Flags", .string("read"), "expected as, got s"),
        ("Value", .array(.string, []), "expected ay, got as"),
        ("Notifying", .string("true"), "expected b, got s"),
        ("Service", .string("/org"), "expected o, got s"),
    ])
    func wrongTypeThrows(_ key: String, _ value: DBusValue, _ detail: String) {
        var payload = Fixture.characteristic(service: service)
        payload[key] = .variant(value)
        let error = #expect(throws: DBusError.self) { try GattCharacteristicProperties(properties: payload) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.message == "org.bluez.GattCharacteristic1.\(key): \(detail)")
    }

    @Test func notificationsAndNotifyState() throws {
        var characteristic = try GattCharacteristicProperties(properties: Fixture.characteristic(service: service))
        try characteristic.apply(changed: ["Notifying": .variant(.boolean(true))], invalidated: [])
        #expect(characteristic.notifying == true)
        try characteristic.apply(changed: ["Value": .variant(.bytes(Data([0x01, 0x02])))], invalidated: [])
        #expect(characteristic.value == Data([0x01, 0x02]))
        try characteristic.apply(changed: ["MTU": .variant(.uint16(517))], invalidated: [])
        #expect(characteristic.mtu == 517)
        try characteristic.apply(changed: [:], invalidated: ["MTU", "Value", "Flags"])
        #expect(characteristic.mtu == nil)
        #expect(characteristic.value == nil)
        #expect(characteristic.flags == [.read, .write, .notify])
        try characteristic.apply(changed: ["Flags": .variant(Fixture.strings(["indicate", "new"]))], invalidated: [])
        #expect(characteristic.flags == .indicate)
        #expect(characteristic.unknownFlags == ["new"])
    }

    @Test func roundTrips() throws {
        let payload = Fixture.characteristic(service: service)
        let characteristic = try GattCharacteristicProperties(properties: payload)
        #expect(characteristic.dbusProperties == payload.mapValues(\.unwrapped))
        #expect(characteristic.dbusProperties["MTU"]?.type == .uint16)
        #expect(characteristic.dbusProperties["Handle"]?.type == .uint16)
    }
}
