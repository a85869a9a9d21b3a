import BlueZ
import DBus
import Foundation
import Testing

@Suite struct GattDescriptorPropertiesTests {
    let characteristic: ObjectPath

    init() throws {
        characteristic = try Fixture.path(Fixture.deviceText + "/service0020/char0021")
    }

    @Test func decodesARemoteDescriptor() throws {
        let descriptor = try GattDescriptorProperties(properties: Fixture.descriptor(characteristic: characteristic))
        #expect(descriptor.uuid == "00002902-0000-1000-8000-00805f9b34fb")
        #expect(descriptor.characteristic == characteristic)
        #expect(descriptor.value == Data())
        #expect(descriptor.flags == nil)
        #expect(descriptor.flagStrings == nil)
        #expect(descriptor.handle == nil)
        let path = try BlueZPath.descriptor(handle: 0x0023, characteristic: characteristic)
        #expect(descriptor.resolvedHandle(path: path) == 0x0023)
        #expect(descriptor.dbusProperties == Fixture.descriptor(characteristic: characteristic).mapValues(\.unwrapped))
    }

    @Test func decodesAnExportedDescriptorWithFlags() throws {
        let payload = Fixture.variants([
            "UUID": .string("00002901-0000-1000-8000-00805f9b34fb"), "Characteristic": .objectPath(characteristic),
            "Flags": Fixture.strings(["read", "secure-write", "notify"]), "Handle": .uint16(0),
        ])
        let descriptor = try GattDescriptorProperties(properties: payload)
        #expect(descriptor.flags == [.read, .secureWrite])
        // `notify` is a characteristic flag, unknown for descriptors: kept, not dropped.
        #expect(descriptor.unknownFlags == ["notify"])
        #expect(descriptor.flagStrings == ["read", "secure-write", "notify"])
        #expect(descriptor.handle == 0)
        #expect(descriptor.dbusProperties == payload.mapValues(\.unwrapped))
    }

    @Test(arguments: ["UUID", "Characteristic"])
    func requiredPropertyMissingThrows(_ key: String) {
        var payload = Fixture.descriptor(characteristic: characteristic)
        payload[key] = nil
        let error = #expect(throws: DBusError.self) { try GattDescriptorProperties(properties: payload) }
        #expect(error?.message == "org.bluez.GattDescriptor1.\(key): required property is missing")
    }

    @Test func wrongTypeThrows() {
        var payload = Fixture.descriptor(characteristic: characteristic)
        payload["Value"] = .variant(.string("01"))
        let error = #expect(throws: DBusError.self) { try GattDescriptorProperties(properties: payload) }
        #expect(error?.message == "org.bluez.GattDescriptor1.Value: expected ay, got s")
    }

    @Test func appliesValueAndFlagChanges() throws {
        var descriptor = try GattDescriptorProperties(properties: Fixture.descriptor(characteristic: characteristic))
        try descriptor.apply(changed: ["Value": .variant(.bytes(Data([1, 0])))], invalidated: [])
        #expect(descriptor.value == Data([1, 0]))
        try descriptor.apply(changed: ["Flags": .variant(Fixture.strings(["write", "odd"]))], invalidated: [])
        #expect(descriptor.flags == .write)
        #expect(descriptor.unknownFlags == ["odd"])
        try descriptor.apply(changed: [:], invalidated: ["Flags"])
        #expect(descriptor.flags == nil)
        #expect(descriptor.unknownFlags.isEmpty)
    }
}
