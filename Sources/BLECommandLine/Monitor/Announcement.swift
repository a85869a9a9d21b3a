import BLE
import BlueZ
import DBus
import Foundation

/// One thing bluetoothd announced, as `ble monitor` prints it: an object's interfaces added or
/// removed, or its properties changed; bluetoothd leaving or coming back.
struct Announcement {
    enum Change: String {
        case added, changed, removed, left, back
    }

    var change: Change
    var path: ObjectPath?
    /// The BlueZ interfaces concerned (Device1 for a device, …), by name.
    var interfaces: [String] = []
    /// Properties with their values, sorted by name (added: those of the object's main interface).
    var properties: [(name: String, value: DBusValue)] = []
    /// Properties that no longer have a value.
    var invalidated: [String] = []

    /// What an event of bluetoothd's object tree announces; nil for a snapshot (not a signal).
    init?(_ event: ObjectTreeEvent) {
        switch event {
        case .interfacesAdded(let path, let added):
            change = .added
            self.path = path
            interfaces = added.keys.map(\.rawValue).sorted()
            let main = Self.mainInterface(of: path).flatMap { added[$0] } ?? [:]
            properties = main.keys.sorted().map { ($0, main[$0] ?? .boolean(false)) }
        case .interfacesRemoved(let path, let removed):
            change = .removed
            self.path = path
            interfaces = removed.map(\.rawValue).sorted()
        case .propertiesChanged(let path, let interface, let changed, let gone):
            change = .changed
            self.path = path
            interfaces = [interface.rawValue]
            properties = changed.keys.sorted().map { ($0, changed[$0] ?? .boolean(false)) }
            invalidated = gone.sorted()
        case .reset:
            change = .left
        case .snapshot:
            return nil
        }
    }

    /// bluetoothd came (back) on the bus.
    static let bluetoothdBack = Announcement(change: .back)

    private init(change: Change) { self.change = change }

    /// `adapter`, `device`, `service`, `characteristic`, `descriptor`, or `object`.
    var kind: String {
        switch path.flatMap(BlueZPath.kind(of:)) {
        case .adapter?: "adapter"
        case .device?: "device"
        case .service?: "service"
        case .characteristic?: "characteristic"
        case .descriptor?: "descriptor"
        default: "object"
        }
    }

    /// The device's address, for a device or an object below one.
    var address: String? {
        path.flatMap(BlueZPath.device(containing:)).flatMap(BlueZPath.deviceAddress(of:))?.description
    }

    /// The lines bluetoothctl's style gives it: `[NEW] Device C4:… Test HRM`, one `[CHG]` line
    /// per property, `[DEL] Device C4:…`.
    var lines: [String] {
        switch change {
        case .left: return ["[bluetoothd left the bus]"]
        case .back: return ["[bluetoothd is on the bus]"]
        case .added:
            let detail = [name, uuid].compactMap { $0 }.joined(separator: " ")
            return ["[NEW] \(subject)" + (detail.isEmpty ? "" : " \(detail)")]
        case .removed:
            return ["[DEL] \(subject)"]
        case .changed:
            return properties.map { "[CHG] \(subject) \($0.name): \(PropertyText.text($0.value))" }
                + invalidated.map { "[CHG] \(subject) \($0): (no value)" }
        }
    }

    /// One JSON object.
    func record(at date: Date) -> AnnouncementRecord {
        AnnouncementRecord(
            time: Describe.timestamp(date), event: change.rawValue,
            kind: change == .left || change == .back ? nil : kind,
            path: path?.rawValue, address: address, interfaces: interfaces.isEmpty ? nil : interfaces,
            properties: properties.isEmpty
                ? nil : Dictionary(properties.map { ($0.name, PropertyText.json($0.value)) }, uniquingKeysWith: { $1 }),
            invalidated: invalidated.isEmpty ? nil : invalidated)
    }

    /// `Device C4:7C:8D:6A:11:22`, `Service C4:7C:8D:6A:11:22 service000a`, `Adapter hci0`.
    private var subject: String {
        guard let path else { return "" }
        let label = kind.prefix(1).uppercased() + kind.dropFirst()
        switch BlueZPath.kind(of: path) {
        case .adapter?: return "\(label) \(path.elements.last ?? "")"
        case .device?: return "\(label) \(address ?? path.rawValue)"
        case .service?, .characteristic?, .descriptor?:
            let device = BlueZPath.device(containing: path)?.rawValue ?? ""
            return "\(label) \(address ?? device) \(path.rawValue.dropFirst(device.count + 1))"
        default: return "\(label) \(path.rawValue)"
        }
    }

    private var name: String? {
        if case .string(let text)? = properties.first(where: { $0.name == "Name" || $0.name == "Alias" })?.value {
            return text
        }
        return nil
    }

    private var uuid: String? {
        guard case .string(let text)? = properties.first(where: { $0.name == "UUID" })?.value else { return nil }
        return Describe.uuid(BluetoothUUID(text))
    }

    private static func mainInterface(of path: ObjectPath) -> InterfaceName? {
        switch BlueZPath.kind(of: path) {
        case .adapter?: BlueZInterface.adapter1
        case .device?: BlueZInterface.device1
        case .service?: BlueZInterface.gattService1
        case .characteristic?: BlueZInterface.gattCharacteristic1
        case .descriptor?: BlueZInterface.gattDescriptor1
        default: nil
        }
    }
}

/// An announcement as `ble monitor --json` prints it, one object per line.
struct AnnouncementRecord: JSONLineRecord {
    var time: String
    var event: String
    var kind: String?
    var path: String?
    var address: String?
    var interfaces: [String]?
    var properties: [String: JSONValue]?
    var invalidated: [String]?
}
