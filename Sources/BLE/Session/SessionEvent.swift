import BlueZ
import DBus

/// What the session tells the objects that listen to it (central, scans, peripherals,
/// characteristics), in the order bluetoothd said it.
enum SessionEvent: Sendable {
    /// The object tree changed: the event as received (with its values), its effect, and the
    /// serial bluetoothd gave the signal (0 for a re-read), which orders it against replies.
    case tree(ObjectTreeEvent, [ObjectTreeChange], serial: UInt32)
    /// bluetoothd left the bus: every object is gone.
    case daemonGone
    /// bluetoothd is (back) on the bus and the tree was re-read.
    case daemonBack
    /// A BlueZ signal that is not an object-tree change (e.g. `Device1.Disconnected`).
    case signal(DBusMessage)

    /// Whether this event concerns `prefix` or something below it.
    func concerns(_ prefix: ObjectPath) -> Bool {
        switch self {
        case .daemonGone, .daemonBack: return true
        case .signal(let message): return message.path?.isInNamespace(prefix) ?? false
        case .tree(let event, let changes, _):
            if changes.contains(where: { $0.path.isInNamespace(prefix) }) { return true }
            switch event {
            case .propertiesChanged(let path, _, _, _): return path.isInNamespace(prefix)
            case .snapshot, .reset: return true
            default: return false
            }
        }
    }
}

extension SessionEvent {
    /// Whether this event concerns `path` itself: a change of its interfaces or properties, a
    /// signal it emitted, or the whole tree (a snapshot, a reset, bluetoothd coming and going).
    func concerns(exactly path: ObjectPath) -> Bool {
        switch self {
        case .daemonGone, .daemonBack: return true
        case .signal(let message): return message.path == path
        case .tree(let event, let changes, _):
            if changes.contains(where: { $0.path == path }) { return true }
            switch event {
            case .propertiesChanged(let changed, _, _, _): return changed == path
            case .snapshot, .reset: return true
            default: return false
            }
        }
    }
}
