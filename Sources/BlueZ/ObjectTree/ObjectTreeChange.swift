import DBus

/// One effect of an ``ObjectTreeEvent`` on a ``BlueZObjectTree``, per object and interface.
public enum ObjectTreeChange: Sendable, Hashable {
    /// The object at the path now implements the interface.
    case added(ObjectPath, InterfaceName)
    /// The object at the path no longer implements the interface.
    case removed(ObjectPath, InterfaceName)
    /// Properties of an interface the object keeps changed: `changedKeys` have new values
    /// (for `PropertiesChanged`, every key the signal carried, even with an equal value, since
    /// BlueZ re-sends a characteristic's `Value` for every notification), `invalidatedKeys` are
    /// gone. Both sorted by name, except invalidated keys of `PropertiesChanged`, which keep the
    /// signal's order.
    case changed(ObjectPath, InterfaceName, changedKeys: [String], invalidatedKeys: [String])

    /// The object's path.
    public var path: ObjectPath {
        switch self {
        case .added(let path, _), .removed(let path, _), .changed(let path, _, _, _): path
        }
    }

    /// The interface concerned.
    public var interface: InterfaceName {
        switch self {
        case .added(_, let interface), .removed(_, let interface), .changed(_, let interface, _, _): interface
        }
    }
}
