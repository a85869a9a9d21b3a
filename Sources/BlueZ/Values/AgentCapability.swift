import DBus

/// The IO capability passed to `AgentManager1.RegisterAgent` (bluez-dbus-api.md §7.1).
///
/// An open set: values a newer BlueZ sends that are not listed here are kept as they are.
public struct AgentCapability: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The string as it travels on the bus.
    public let rawValue: String

    /// Wraps a string as sent on the bus; unknown values are kept.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `""`: the empty string, which bluetoothd treats as `KeyboardDisplay`.
    public static let `default` = AgentCapability(rawValue: "")
    /// `DisplayOnly`
    public static let displayOnly = AgentCapability(rawValue: "DisplayOnly")
    /// `DisplayYesNo`
    public static let displayYesNo = AgentCapability(rawValue: "DisplayYesNo")
    /// `KeyboardOnly`
    public static let keyboardOnly = AgentCapability(rawValue: "KeyboardOnly")
    /// `NoInputNoOutput`: just-works pairing only.
    public static let noInputNoOutput = AgentCapability(rawValue: "NoInputNoOutput")
    /// `KeyboardDisplay`
    public static let keyboardDisplay = AgentCapability(rawValue: "KeyboardDisplay")

    /// The raw string.
    public var description: String { rawValue }
}

extension AgentCapability: DBusRepresentable {
    /// `s`
    public static var dbusType: DBusType { .string }
    /// Decodes an `s`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        self.init(rawValue: try String(dbusValue: dbusValue))
    }
    /// An `s`.
    public var dbusValue: DBusValue { .string(rawValue) }
}
