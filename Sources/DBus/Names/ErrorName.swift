/// A validated D-Bus error name such as `org.freedesktop.DBus.Error.UnknownMethod`.
///
/// Error names follow the interface name rules: at most 255 bytes, two or more elements
/// separated by '.', each of the form `[A-Za-z_][A-Za-z0-9_]*`.
public struct ErrorName: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The name as text, e.g. `org.freedesktop.DBus.Error.Failed`.
    public let rawValue: String

    /// Validates `string` as an error name.
    ///
    /// - Throws: ``DBusError`` with code ``DBusError/Code/invalidName`` naming the broken rule.
    public init(_ string: String) throws(DBusError) {
        try NameValidation.validateDottedName(string, kind: "error name")
        rawValue = string
    }

    /// Wraps a string known to be valid, such as a constant or a name the bus delivered.
    init(unchecked string: String) {
        rawValue = string
    }

    /// The name text.
    public var description: String { rawValue }

    /// Orders names by their text.
    public static func < (lhs: ErrorName, rhs: ErrorName) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
