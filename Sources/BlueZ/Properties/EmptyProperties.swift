import DBus

/// The properties of `org.bluez.GattManager1`: it has none (bluez-dbus-api.md §5.1).
///
/// Present so that every interface of an adapter has a properties type; decoding ignores
/// whatever a newer BlueZ might add.
public struct GattManagerProperties: BlueZInterfaceProperties {
    /// `org.bluez.GattManager1`
    public static var interface: InterfaceName { BlueZInterface.gattManager1 }

    /// Creates the (empty) properties.
    public init() {}

    /// Accepts any dictionary: the interface has no properties, unknown ones are ignored.
    public init(properties: [String: DBusValue]) throws(DBusError) {}

    /// Does nothing: the interface has no properties.
    public mutating func apply(changed: [String: DBusValue], invalidated: [String]) throws(DBusError) {}

    /// Always empty.
    public var dbusProperties: [String: DBusValue] { [:] }
}

/// The properties of `org.bluez.AgentManager1` on `/org/bluez`: it has none
/// (bluez-dbus-api.md §7.1).
public struct AgentManagerProperties: BlueZInterfaceProperties {
    /// `org.bluez.AgentManager1`
    public static var interface: InterfaceName { BlueZInterface.agentManager1 }

    /// Creates the (empty) properties.
    public init() {}

    /// Accepts any dictionary: the interface has no properties, unknown ones are ignored.
    public init(properties: [String: DBusValue]) throws(DBusError) {}

    /// Does nothing: the interface has no properties.
    public mutating func apply(changed: [String: DBusValue], invalidated: [String]) throws(DBusError) {}

    /// Always empty.
    public var dbusProperties: [String: DBusValue] { [:] }
}
