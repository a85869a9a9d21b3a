import DBus

/// Builds the module's name constants from literals.
///
/// The `DBus` module validates every name it wraps and keeps its unchecked initializers
/// internal, so constants here go through the throwing initializers. Every literal passed in is
/// a fixed, valid name, and `VocabularyTests` checks each constant's text; the fallbacks below
/// exist only so that no constant needs `try!`. They are valid names no BlueZ object uses, so a
/// typo would surface as an unanswered call in tests rather than as a crash.
enum NameLiteral {
    /// An interface name; falls back to `org.bluez.InvalidConstant`, then to the bus interface.
    static func interface(_ text: String) -> InterfaceName {
        if let name = try? InterfaceName(text) { return name }
        return (try? InterfaceName(fallbackInterface)) ?? .bus
    }

    /// A member name; falls back to `InvalidConstant`.
    static func member(_ text: String) -> MemberName {
        if let name = try? MemberName(text) { return name }
        // `InvalidConstant` is a valid member name, so this recursion stops after one step.
        return member(fallbackMember)
    }

    /// An object path; falls back to the root path.
    static func path(_ text: String) -> ObjectPath {
        (try? ObjectPath(text)) ?? .root
    }

    /// A bus name; falls back to the bus itself.
    static func busName(_ text: String) -> BusName {
        (try? BusName(text)) ?? .bus
    }

    static let fallbackInterface = "org.bluez.InvalidConstant"
    static let fallbackMember = "InvalidConstant"
}
