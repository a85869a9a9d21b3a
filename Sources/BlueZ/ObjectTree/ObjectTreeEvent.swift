import DBus

/// Something that changes bluetoothd's object tree as a client mirrors it: the answer to
/// `GetManagedObjects`, the three object-manager signals, and bluetoothd leaving the bus.
///
/// Property values are the values themselves, not the variants that carry them on the bus
/// (``init(signal:)`` and ``init(managedObjectsReply:)`` unwrap them).
public enum ObjectTreeEvent: Sendable, Hashable {
    /// A `GetManagedObjects` reply: the whole tree, replacing what was known.
    case snapshot([ObjectPath: [InterfaceName: [String: DBusValue]]])
    /// `InterfacesAdded(o, a{sa{sv}})`: interfaces (with all their properties) added to an object.
    case interfacesAdded(ObjectPath, [InterfaceName: [String: DBusValue]])
    /// `InterfacesRemoved(o, as)`: interfaces removed from an object.
    case interfacesRemoved(ObjectPath, [InterfaceName])
    /// `PropertiesChanged(s, a{sv}, as)` emitted by the object at the path.
    case propertiesChanged(ObjectPath, InterfaceName, changed: [String: DBusValue], invalidated: [String])
    /// bluetoothd left the bus (`NameOwnerChanged` to no owner): every object is gone.
    case reset
}
