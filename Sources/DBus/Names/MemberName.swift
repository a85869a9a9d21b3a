/// A validated D-Bus member name: the name of a method or signal, such as `GetManagedObjects`.
///
/// A member name is 1 to 255 bytes of the form `[A-Za-z_][A-Za-z0-9_]*`; unlike the other
/// names it has a single element, so '.' is not allowed.
public struct MemberName: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The name as text, e.g. `GetManagedObjects`.
    public let rawValue: String

    /// Validates `string` as a member name.
    ///
    /// - Throws: ``DBusError`` with code ``DBusError/Code/invalidName`` naming the broken rule.
    public init(_ string: String) throws(DBusError) {
        try NameValidation.checkLength(string, kind: "member name")
        if let violation = NameValidation.identifierViolation(Substring(string).unicodeScalars) {
            throw NameValidation.failure("member name", string, violation)
        }
        rawValue = string
    }

    /// Wraps a string known to be valid, such as a constant or a name the bus delivered.
    init(unchecked string: String) {
        rawValue = string
    }

    /// The name text.
    public var description: String { rawValue }

    /// Orders names by their text.
    public static func < (lhs: MemberName, rhs: MemberName) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
