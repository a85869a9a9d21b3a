import DBus

/// The `Transport` key of a discovery filter: `auto`, `bredr` or `le` (exact, lower-case).
///
/// An open set: values a newer BlueZ sends that are not listed here are kept as they are.
public struct DiscoveryTransport: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The string as it travels on the bus.
    public let rawValue: String

    /// Wraps a string as sent on the bus; unknown values are kept.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `auto`: every transport the adapter has enabled.
    public static let auto = DiscoveryTransport(rawValue: "auto")
    /// `bredr`: BR/EDR inquiry only.
    public static let bredr = DiscoveryTransport(rawValue: "bredr")
    /// `le`: LE scanning only.
    public static let le = DiscoveryTransport(rawValue: "le")

    /// The raw string.
    public var description: String { rawValue }
}

extension DiscoveryTransport: DBusRepresentable {
    /// `s`
    public static var dbusType: DBusType { .string }
    /// Decodes an `s`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        self.init(rawValue: try String(dbusValue: dbusValue))
    }
    /// An `s`.
    public var dbusValue: DBusValue { .string(rawValue) }
}
