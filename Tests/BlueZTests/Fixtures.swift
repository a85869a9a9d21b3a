import BlueZ
import DBus
import Foundation

/// Payloads shaped like the ones in bluez-dbus-api.md §12, with values wrapped in variants as
/// they arrive in an `a{sv}`.
enum Fixture {
    static let adapterText = "/org/bluez/hci0"
    static let deviceText = "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22"
    static let introspectable = InterfaceName.introspectable
    static let properties = InterfaceName.properties

    static func path(_ text: String) throws -> ObjectPath { try ObjectPath(text) }

    /// An `a{sv}`-style dictionary: every value wrapped in a variant.
    static func variants(_ pairs: KeyValuePairs<String, DBusValue>) -> [String: DBusValue] {
        var out: [String: DBusValue] = [:]
        for (key, value) in pairs { out[key] = .variant(value) }
        return out
    }

    static func strings(_ values: [String]) -> DBusValue { .array(.string, values.map { .string($0) }) }

    static func paths(_ values: [ObjectPath]) -> DBusValue { .array(.objectPath, values.map { .objectPath($0) }) }

    /// `a{qv}` with `ay` in each variant.
    static func manufacturerData(_ entries: [(UInt16, [UInt8])]) -> DBusValue {
        .dictionary(
            key: .uint16, value: .variant,
            entries.map { DBusDictionaryEntry(.uint16($0.0), .variant(.bytes(Data($0.1)))) })
    }

    /// `a{sv}` with `ay` in each variant.
    static func serviceData(_ entries: [(String, [UInt8])]) -> DBusValue {
        .dictionary(
            key: .string, value: .variant,
            entries.map { DBusDictionaryEntry(.string($0.0), .variant(.bytes(Data($0.1)))) })
    }

    /// `a{yv}` with `ay` in each variant.
    static func advertisingData(_ entries: [(UInt8, [UInt8])]) -> DBusValue {
        .dictionary(
            key: .byte, value: .variant, entries.map { DBusDictionaryEntry(.byte($0.0), .variant(.bytes(Data($0.1)))) })
    }

    /// `/org/bluez/hci0` `Adapter1`, 5.66 shape.
    static func adapter() -> [String: DBusValue] {
        variants([
            "Address": .string("00:1A:7D:DA:71:13"), "AddressType": .string("public"), "Name": .string("host"),
            "Alias": .string("host"), "Class": .uint32(0x6c_010c), "Powered": .boolean(true),
            "Discoverable": .boolean(false), "DiscoverableTimeout": .uint32(180), "Pairable": .boolean(true),
            "PairableTimeout": .uint32(0), "Discovering": .boolean(false),
            "UUIDs": strings(["0000110e-0000-1000-8000-00805f9b34fb", "00001801-0000-1000-8000-00805f9b34fb"]),
            "Modalias": .string("usb:v1D6Bp0246d0542"), "Roles": strings(["central", "peripheral"]),
        ])
    }

    /// A scanned device with RSSI and service data, 5.66 shape.
    static func device(
        address: String = "C4:7C:8D:6A:11:22", rssi: Int16? = -71, connected: Bool = false, resolved: Bool = false
    ) -> [String: DBusValue] {
        var out = variants([
            "Address": .string(address), "AddressType": .string("public"), "Name": .string("Flower care"),
            "Alias": .string("Flower care"), "Paired": .boolean(false), "Bonded": .boolean(false),
            "Trusted": .boolean(false), "Blocked": .boolean(false), "LegacyPairing": .boolean(false),
            "Connected": .boolean(connected), "UUIDs": strings(["0000fe95-0000-1000-8000-00805f9b34fb"]),
            "Adapter": .objectPath(.root), "ServicesResolved": .boolean(resolved),
            "ServiceData": serviceData([("0000fe95-0000-1000-8000-00805f9b34fb", [0x71, 0x20, 0x98, 0x00])]),
        ])
        if let adapter = try? ObjectPath(adapterText) { out["Adapter"] = .variant(.objectPath(adapter)) }
        if let rssi { out["RSSI"] = .variant(.int16(rssi)) }
        return out
    }

    static func service(uuid: String = "00001a00-0000-1000-8000-00805f9b34fb", device: ObjectPath) -> [String:
        DBusValue]
    {
        variants([
            "UUID": .string(uuid), "Primary": .boolean(true), "Device": .objectPath(device), "Includes": paths([]),
        ])
    }

    /// The characteristic of §12 (with `Handle`, as ≥5.69 sends it).
    static func characteristic(service: ObjectPath, handle: UInt16? = 0x0021) -> [String: DBusValue] {
        var out = variants([
            "UUID": .string("00001a01-0000-1000-8000-00805f9b34fb"), "Service": .objectPath(service),
            "Value": .bytes(Data()), "Notifying": .boolean(false), "Flags": strings(["read", "write", "notify"]),
            "NotifyAcquired": .boolean(false), "MTU": .uint16(247),
        ])
        if let handle { out["Handle"] = .variant(.uint16(handle)) }
        return out
    }

    static func descriptor(characteristic: ObjectPath) -> [String: DBusValue] {
        variants([
            "UUID": .string("00002902-0000-1000-8000-00805f9b34fb"), "Characteristic": .objectPath(characteristic),
            "Value": .bytes(Data()),
        ])
    }

    /// One object as bluetoothd lists it: Introspectable, the interface, Properties.
    static func object(_ interface: InterfaceName, _ properties: [String: DBusValue]) -> [InterfaceName: [String:
        DBusValue]]
    {
        [introspectable: [:], interface: properties, Fixture.properties: [:]]
    }

    /// `GetManagedObjects` of a daemon with one adapter and no devices.
    static func snapshot() throws -> [ObjectPath: [InterfaceName: [String: DBusValue]]] {
        [
            try path("/org/bluez"): [introspectable: [:], BlueZInterface.agentManager1: [:]],
            try path(adapterText): [
                introspectable: [:], BlueZInterface.adapter1: adapter(), properties: [:],
                BlueZInterface.gattManager1: [:],
                BlueZInterface.leAdvertisingManager1: variants([
                    "ActiveInstances": .byte(0), "SupportedInstances": .byte(5),
                    "SupportedIncludes": strings(["tx-power", "appearance", "local-name"]),
                ]),
            ],
        ]
    }
}

extension DBusValue {
    /// Strips one variant level, as the tree stores values.
    var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner }
        return self
    }
}
