/// A validated D-Bus bus name: a unique connection name such as `:1.42` or a well-known name
/// such as `org.bluez`.
///
/// Both kinds are at most 255 bytes and have two or more non-empty elements of `[A-Za-z0-9_-]`
/// separated by '.'; only elements of unique names may start with a digit.
public struct BusName: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The name as text, e.g. `org.bluez` or `:1.42`.
    public let rawValue: String

    /// Validates `string` as a unique or well-known bus name.
    ///
    /// - Throws: ``DBusError`` with code ``DBusError/Code/invalidName`` naming the broken rule.
    public init(_ string: String) throws(DBusError) {
        try Self.validate(string)
        rawValue = string
    }

    /// Wraps a string known to be valid, such as a constant or a name the bus delivered.
    init(unchecked string: String) {
        rawValue = string
    }

    /// `org.freedesktop.DBus`, the message bus itself.
    public static let bus = BusName(unchecked: "org.freedesktop.DBus")

    /// Whether this is a unique connection name (`:1.42`), which the bus assigns to one
    /// connection for its lifetime, rather than a well-known name that can change owners.
    public var isUnique: Bool {
        rawValue.utf8.first == UInt8(ascii: ":")
    }

    /// The name text.
    public var description: String { rawValue }

    /// Orders names by their text.
    public static func < (lhs: BusName, rhs: BusName) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    private static func validate(_ string: String) throws(DBusError) {
        let kind = "bus name"
        try NameValidation.checkLength(string, kind: kind)
        var scalars = Substring(string).unicodeScalars
        if scalars.first == "." {
            throw NameValidation.failure(kind, string, "must not start with '.'")
        }
        let unique = scalars.first == ":"
        if unique { scalars = scalars.dropFirst() }
        if scalars.last == "." {
            throw NameValidation.failure(kind, string, "must not end with '.'")
        }
        let elements = scalars.split(separator: ".", omittingEmptySubsequences: false)
        if elements.count < 2 {
            throw NameValidation.failure(
                kind, string, "must have at least two elements separated by '.'")
        }
        for element in elements {
            if let violation = elementViolation(element, unique: unique) {
                throw NameValidation.failure(
                    kind, string,
                    "element \(NameValidation.quoted(String(element))) \(violation)")
            }
        }
    }

    /// Why `element` breaks the element rules, or `nil` when it follows them.
    private static func elementViolation(
        _ element: Substring.UnicodeScalarView, unique: Bool
    ) -> String? {
        guard let first = element.first else { return "must not be empty" }
        // The bus numbers unique names itself (`:1.42`), so only well-known names keep the
        // no-leading-digit rule.
        if !unique && NameValidation.isDigit(first) {
            return "must not start with a digit (only unique names may)"
        }
        for scalar in element where !NameValidation.isWordCharacter(scalar) && scalar != "-" {
            return "contains \(NameValidation.describe(scalar)), only [A-Za-z0-9_-] is allowed"
        }
        return nil
    }
}
