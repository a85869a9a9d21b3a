/// A validated D-Bus interface name such as `org.bluez.Device1`.
///
/// An interface name is at most 255 bytes and has two or more elements separated by '.', each
/// of the form `[A-Za-z_][A-Za-z0-9_]*`.
public struct InterfaceName: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The name as text, e.g. `org.bluez.Device1`.
    public let rawValue: String

    /// Validates `string` as an interface name.
    ///
    /// - Throws: ``DBusError`` with code ``DBusError/Code/invalidName`` naming the broken rule.
    public init(_ string: String) throws(DBusError) {
        try NameValidation.validateDottedName(string, kind: "interface name")
        rawValue = string
    }

    /// Wraps a string known to be valid, such as a constant or a name the bus delivered.
    init(unchecked string: String) {
        rawValue = string
    }

    /// `org.freedesktop.DBus.Properties`
    public static let properties = InterfaceName(unchecked: "org.freedesktop.DBus.Properties")
    /// `org.freedesktop.DBus.ObjectManager`
    public static let objectManager = InterfaceName(
        unchecked: "org.freedesktop.DBus.ObjectManager")
    /// `org.freedesktop.DBus.Introspectable`
    public static let introspectable = InterfaceName(
        unchecked: "org.freedesktop.DBus.Introspectable")
    /// `org.freedesktop.DBus.Peer`
    public static let peer = InterfaceName(unchecked: "org.freedesktop.DBus.Peer")
    /// `org.freedesktop.DBus`, the interface of the message bus itself.
    public static let bus = InterfaceName(unchecked: "org.freedesktop.DBus")

    /// The name text.
    public var description: String { rawValue }

    /// Orders names by their text.
    public static func < (lhs: InterfaceName, rhs: InterfaceName) -> Bool {
        NameHashing.less(lhs.rawValue, rhs.rawValue)
    }
}
