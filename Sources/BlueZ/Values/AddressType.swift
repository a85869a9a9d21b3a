import DBus

/// The `AddressType` of an adapter or device: `public` or `random`.
///
/// An open set: values a newer BlueZ sends that are not listed here are kept as they are.
public struct AddressType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The string as it travels on the bus.
    public let rawValue: String

    /// Wraps a string as sent on the bus; unknown values are kept.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `public`: an IEEE-assigned public address.
    public static let `public` = AddressType(rawValue: "public")
    /// `random`: a random address; see `BluetoothAddress.randomAddressKind`.
    public static let random = AddressType(rawValue: "random")

    /// The raw string.
    public var description: String { rawValue }
}

extension AddressType: DBusRepresentable {
    /// `s`
    public static var dbusType: DBusType { .string }
    /// Decodes an `s`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        self.init(rawValue: try String(dbusValue: dbusValue))
    }
    /// An `s`.
    public var dbusValue: DBusValue { .string(rawValue) }
}
