import BlueZ
import DBus

/// Orders re-read property values (a `Properties.GetAll` reply) against bluetoothd's signals
/// by the serials bluetoothd gave them, so that neither overwrites a newer value with an
/// older one.
///
/// The reply travels apart from the signal stream: signals sent after it may be applied
/// before it, and signals sent before it may be applied after it. bluetoothd numbers all its
/// messages on one connection in the order it sends them, so the serials tell which is newer.
struct PropertyRefreshes: Sendable {
    struct Key: Hashable, Sendable {
        var path: ObjectPath
        var interface: InterfaceName
    }

    /// Re-reads under way: the properties that signals changed meanwhile, with the newest
    /// serial that changed each.
    private var pending: [Key: [String: UInt32]] = [:]
    /// Re-reads applied: the reply's serial and the properties it set. Signals older than the
    /// reply must not set those again; the first newer signal ends the entry (signals are
    /// applied in order).
    private var applied: [Key: (serial: UInt32, names: Set<String>)] = [:]

    /// Starts a re-read; false when one of `key` is already under way.
    mutating func begin(_ key: Key) -> Bool {
        guard pending[key] == nil else { return false }
        pending[key] = [:]
        return true
    }

    /// Ends a re-read that got no reply.
    mutating func cancel(_ key: Key) {
        pending[key] = nil
    }

    /// The values of a re-read's reply that are newer than every signal applied meanwhile;
    /// ends the re-read.
    mutating func finish(_ key: Key, values: [String: DBusValue], serial: UInt32) -> [String: DBusValue] {
        let touched = pending.removeValue(forKey: key) ?? [:]
        let kept = values.filter { name, _ in touched[name].map { Self.isOlder($0, than: serial) } ?? true }
        applied[key] = (serial, Set(kept.keys))
        return kept
    }

    /// `event` (a signal bluetoothd numbered `serial`) without the property values that a
    /// newer re-read already set; notes what it changes for the re-reads under way.
    mutating func filter(_ event: ObjectTreeEvent, serial: UInt32) -> ObjectTreeEvent {
        switch event {
        case .propertiesChanged(let path, let interface, let changed, let invalidated):
            guard serial != 0 else { return event }  // not a signal: the mirror's own re-read
            let key = Key(path: path, interface: interface)
            if pending[key] != nil {
                for name in changed.keys { pending[key]?[name] = serial }
            }
            guard let refresh = applied[key] else { return event }
            guard Self.isOlder(serial, than: refresh.serial) else {
                applied[key] = nil
                return event
            }
            let kept = changed.filter { !refresh.names.contains($0.key) }
            return .propertiesChanged(path, interface, changed: kept, invalidated: invalidated)
        case .interfacesRemoved(let path, let interfaces):
            for interface in interfaces { applied[Key(path: path, interface: interface)] = nil }
            return event
        case .snapshot, .reset:
            applied.removeAll()
            return event
        case .interfacesAdded:
            return event
        }
    }

    /// Whether serial `a` came before `b` (serials wrap around after 2³²).
    static func isOlder(_ a: UInt32, than b: UInt32) -> Bool {
        Int32(bitPattern: a &- b) < 0
    }
}
