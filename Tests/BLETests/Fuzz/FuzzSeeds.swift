import BlueZ
import DBus
import Foundation

/// The seed inputs of the fuzz corpus: what bluetoothd really sends (an object-manager reply,
/// interfaces added and removed, property changes) as wire messages, and a few recipes.
/// `make fuzz-corpus` writes them to Tests/Fuzz/corpus; the regression test replays them too.
enum FuzzSeeds {
    static func all() throws -> [String: [UInt8]] {
        var seeds: [String: [UInt8]] = [:]
        for (name, message) in try messages() { seeds["wire-\(name)"] = [0] + (try message.wireFormat()) }
        seeds["recipe-device"] = [1, 4, 2, 8, 17] + Array("C4:7C:8D:6A:11:22".utf8) + [0, 0]
        seeds["recipe-empty"] = [1]
        seeds["recipe-nested"] = [1, 3, 13, 14, 13, 3, 42, 14, 13, 2, 55, 10, 0xFF, 0xFF]
        return seeds
    }

    static let adapter = knownPath("/org/bluez/hci0")
    static let device = knownPath("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22")
    static let service = knownPath("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service000a")
    static let characteristic = knownPath("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service000a/char000b")

    static func dictionary(_ entries: KeyValuePairs<String, DBusValue>) -> DBusValue {
        .dictionary(
            key: .string, value: .variant, entries.map { DBusDictionaryEntry(.string($0.key), .variant($0.value)) })
    }

    static func strings(_ values: [String]) -> DBusValue { .array(.string, values.map { .string($0) }) }

    static var deviceProperties: DBusValue {
        dictionary([
            "Address": .string("C4:7C:8D:6A:11:22"), "AddressType": .string("random"), "Name": .string("HRM"),
            "Alias": .string("HRM"), "Paired": .boolean(false), "Bonded": .boolean(false), "Trusted": .boolean(false),
            "Blocked": .boolean(false), "LegacyPairing": .boolean(false), "Connected": .boolean(true),
            "ServicesResolved": .boolean(true), "RSSI": .int16(-60), "TxPower": .int16(4),
            "UUIDs": strings(["0000180d-0000-1000-8000-00805f9b34fb"]), "Adapter": .objectPath(adapter),
            "ManufacturerData": .dictionary(
                key: .uint16, value: .variant, [DBusDictionaryEntry(.uint16(0x004C), .variant(.bytes(Data([1, 2]))))]),
            "ServiceData": .dictionary(
                key: .string, value: .variant,
                [DBusDictionaryEntry(.string("0000180d-0000-1000-8000-00805f9b34fb"), .variant(.bytes(Data([7]))))]),
            "AdvertisingFlags": .bytes(Data([6])), "Appearance": .uint16(833),
        ])
    }

    static var managedObjects: DBusValue {
        func object(_ path: ObjectPath, _ interfaces: [(String, DBusValue)]) -> DBusDictionaryEntry {
            DBusDictionaryEntry(
                .objectPath(path),
                .dictionary(
                    key: .string, value: .dictionary(key: .string, value: .variant),
                    interfaces.map { DBusDictionaryEntry(.string($0.0), $0.1) }))
        }
        return .dictionary(
            key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
            [
                object(
                    adapter,
                    [
                        (
                            "org.bluez.Adapter1",
                            dictionary([
                                "Address": .string("00:11:22:33:44:55"), "AddressType": .string("public"),
                                "Name": .string("sim"), "Alias": .string("sim"), "Class": .uint32(0),
                                "Powered": .boolean(true), "Discoverable": .boolean(false),
                                "Pairable": .boolean(true), "Discovering": .boolean(false),
                                "UUIDs": strings([]), "Roles": strings(["central", "peripheral"]),
                            ])
                        )
                    ]),
                object(device, [("org.bluez.Device1", deviceProperties)]),
                object(
                    service,
                    [
                        (
                            "org.bluez.GattService1",
                            dictionary([
                                "UUID": .string("0000180d-0000-1000-8000-00805f9b34fb"), "Primary": .boolean(true),
                                "Device": .objectPath(device), "Includes": .array(.objectPath, []),
                                "Handle": .uint16(10),
                            ])
                        )
                    ]),
                object(
                    characteristic,
                    [
                        (
                            "org.bluez.GattCharacteristic1",
                            dictionary([
                                "UUID": .string("00002a37-0000-1000-8000-00805f9b34fb"),
                                "Service": .objectPath(service),
                                "Value": .bytes(Data([0, 72])), "Notifying": .boolean(false),
                                "Flags": strings(["read", "notify", "x-unknown-flag"]), "Handle": .uint16(11),
                                "MTU": .uint16(247),
                            ])
                        )
                    ]),
            ])
    }

    static func messages() throws -> [String: DBusMessage] {
        let objectManager = try InterfaceName("org.freedesktop.DBus.ObjectManager")
        let properties = InterfaceName.properties
        return [
            "managed-objects": DBusMessage(kind: .methodReturn, replySerial: 1, body: [managedObjects]),
            "interfaces-added": DBusMessage(
                kind: .signal, path: .root, interface: objectManager, member: try MemberName("InterfacesAdded"),
                body: [
                    .objectPath(device),
                    .dictionary(
                        key: .string, value: .dictionary(key: .string, value: .variant),
                        [DBusDictionaryEntry(.string("org.bluez.Device1"), deviceProperties)]),
                ]),
            "interfaces-removed": DBusMessage(
                kind: .signal, path: .root, interface: objectManager, member: try MemberName("InterfacesRemoved"),
                body: [.objectPath(device), strings(["org.bluez.Device1"])]),
            "value-changed": DBusMessage(
                kind: .signal, path: characteristic, interface: properties, member: try MemberName("PropertiesChanged"),
                body: [
                    .string("org.bluez.GattCharacteristic1"), dictionary(["Value": .bytes(Data([0, 80]))]),
                    strings([]),
                ]),
            "rssi-wrong-type": DBusMessage(
                kind: .signal, path: device, interface: properties, member: try MemberName("PropertiesChanged"),
                body: [.string("org.bluez.Device1"), dictionary(["RSSI": .string("-60")]), strings(["Name"])]),
        ]
    }
}

/// A path literal the tests know to be valid (the root, should one ever not be).
func knownPath(_ text: String) -> ObjectPath { (try? ObjectPath(text)) ?? .root }
