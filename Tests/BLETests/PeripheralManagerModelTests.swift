import BlueZ
import DBus
import Foundation
import Testing

@testable import BLE

/// The pure parts of the peripheral role: BlueZ flags from properties and permissions, the
/// options dict of bluetoothd's calls, advertisement properties, and central identifiers.
@Suite("PeripheralManager: model")
struct PeripheralManagerModelTests {
    static let flagCases: [(CharacteristicProperties, AttributePermissions, [String])] = [
        (.read, .readable, ["read"]),
        (.read, [.readEncryptionRequired], ["encrypt-read"]),
        (.read, [.readAuthenticationRequired, .readEncryptionRequired], ["encrypt-authenticated-read"]),
        (.read, [.readSecureConnectionsRequired], ["secure-read"]),
        (.write, [.writeEncryptionRequired], ["encrypt-write"]),
        (.write, [.writeAuthenticationRequired], ["encrypt-authenticated-write"]),
        (.write, [.writeSecureConnectionsRequired, .authorizationRequired], ["secure-write", "authorize"]),
        ([.notify, .indicate, .broadcast], .readWrite, ["broadcast", "notify", "indicate"]),
        (
            [.writeWithoutResponse, .reliableWrite, .writableAuxiliaries], .readWrite,
            ["write-without-response", "reliable-write", "writable-auxiliaries"]
        ),
        (.authenticatedSignedWrites, .readWrite, ["authenticated-signed-writes"]),
    ]

    @Test(arguments: flagCases)
    func characteristicFlags(
        _ properties: CharacteristicProperties, _ permissions: AttributePermissions, _ flags: [String]
    ) {
        let characteristic = MutableCharacteristic(uuid: "2A00", properties: properties, permissions: permissions)
        #expect(characteristic.flags == flags)
        // Every flag is one bluetoothd knows: an unknown one would fail the whole registration.
        #expect(GattCharacteristicFlags.parse(characteristic.flags).unknown.isEmpty)
    }

    @Test("Descriptor flags follow the permissions; bluetoothd knows each of them")
    func descriptorFlags() {
        let descriptor = MutableDescriptor(
            uuid: "2901", permissions: [.readEncryptionRequired, .writeable, .authorizationRequired])
        #expect(descriptor.flags == ["encrypt-read", "write", "authorize"])
        #expect(GattDescriptorFlags.parse(descriptor.flags).unknown.isEmpty)
    }

    @Test("The options dict: device, offset, MTU, prepare-authorize, type; a call without reply is a command")
    func requestOptions() throws {
        let device = try ObjectPath("/org/bluez/hci1/dev_11_22_33_44_55_66")
        let dict = DBusValue.dictionary(
            key: .string, value: .variant,
            [
                DBusDictionaryEntry(.string("device"), .variant(.objectPath(device))),
                DBusDictionaryEntry(.string("offset"), .variant(.uint16(4))),
                DBusDictionaryEntry(.string("link"), .variant(.string("LE"))),
                DBusDictionaryEntry(.string("prepare-authorize"), .variant(.boolean(true))),
                DBusDictionaryEntry(.string("mtu"), .variant(.uint16(247))),
                DBusDictionaryEntry(.string("offset-typo"), .variant(.string("ignored"))),
            ])
        let options = RequestOptions(dict)
        #expect(options.central == (try CentralID(adapter: "hci1", address: "11:22:33:44:55:66")))
        #expect(options.offset == 4)
        #expect(options.mtu == 247)
        #expect(options.writeType(noReplyExpected: false) == .reliable)
        #expect(options.writeType(noReplyExpected: true) == .command)
        #expect(RequestOptions(.string("not a dict")).central == nil)
        #expect(RequestOptions(nil).writeType(noReplyExpected: false) == .request)
    }

    @Test("Advertisement data becomes LEAdvertisement1 properties with BlueZ's types and units")
    func advertisementProperties() {
        let advertisement = Advertisement(
            kind: .broadcast, localName: "x", serviceUUIDs: ["180D"], manufacturerData: [0x004C: Data([1])],
            serviceData: ["FEAA": Data([2])], includes: [.localName, .txPower], minInterval: .milliseconds(20),
            maxInterval: .seconds(1), secondaryChannel: .coded)
        let properties = advertisement.properties
        #expect(properties.type == .broadcast)
        #expect(properties.serviceUUIDs == [BluetoothUUID("180D").uuidString])
        #expect(properties.serviceData == [BluetoothUUID("FEAA").uuidString: Data([2])])
        #expect(properties.includes == ["tx-power", "local-name"])
        #expect(properties.minInterval == 20)
        #expect(properties.maxInterval == 1000)
        #expect(properties.secondaryChannel == "Coded")
        #expect(properties.solicitUUIDs == nil)
        #expect(properties.dbusProperties["SolicitUUIDs"] == nil)
    }

    @Test("ATT errors: application codes outside 0x80–0x9F become Unlikely Error")
    func attErrors() {
        #expect(ATTError.application(0x85).code == 0x85)
        #expect(ATTError.application(0x20) == .unlikely)
        #expect(ATTError.invalidOffset.description == "ATT 0x07")
    }

    @Test("Central identifiers come from device paths only")
    func centralIDs() throws {
        let path = try ObjectPath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF")
        #expect(CentralID(devicePath: path)?.description == "hci0/AA:BB:CC:DD:EE:FF")
        #expect(CentralID(devicePath: try ObjectPath("/org/bluez/hci0")) == nil)
        #expect(throws: BLEError.self) { try CentralID(address: "nope") }
    }
}
