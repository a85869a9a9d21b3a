import DBus

/// `Adapter1.PowerState`: the adapter's power state including transitions (≥5.73, earlier experimental).
///
/// An open set: values a newer BlueZ sends that are not listed here are kept as they are.
public struct PowerState: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The string as it travels on the bus.
    public let rawValue: String

    /// Wraps a string as sent on the bus; unknown values are kept.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `on`: powered.
    public static let on = PowerState(rawValue: "on")
    /// `off`: not powered.
    public static let off = PowerState(rawValue: "off")
    /// `off-enabling`: powering on.
    public static let offEnabling = PowerState(rawValue: "off-enabling")
    /// `on-disabling`: powering off.
    public static let onDisabling = PowerState(rawValue: "on-disabling")
    /// `off-blocked`: blocked by rfkill.
    public static let offBlocked = PowerState(rawValue: "off-blocked")

    /// The raw string.
    public var description: String { rawValue }
}

extension PowerState: DBusRepresentable {
    /// `s`
    public static var dbusType: DBusType { .string }
    /// Decodes an `s`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        self.init(rawValue: try String(dbusValue: dbusValue))
    }
    /// An `s`.
    public var dbusValue: DBusValue { .string(rawValue) }
}
