import DBus

/// `LEAdvertisement1.Type`: `broadcast` (non-connectable) or `peripheral` (connectable).
///
/// An open set: values a newer BlueZ sends that are not listed here are kept as they are.
public struct AdvertisementType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The string as it travels on the bus.
    public let rawValue: String

    /// Wraps a string as sent on the bus; unknown values are kept.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `broadcast`: non-connectable; may not be discoverable.
    public static let broadcast = AdvertisementType(rawValue: "broadcast")
    /// `peripheral`: connectable.
    public static let peripheral = AdvertisementType(rawValue: "peripheral")

    /// The raw string.
    public var description: String { rawValue }
}

extension AdvertisementType: DBusRepresentable {
    /// `s`
    public static var dbusType: DBusType { .string }
    /// Decodes an `s`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        self.init(rawValue: try String(dbusValue: dbusValue))
    }
    /// An `s`.
    public var dbusValue: DBusValue { .string(rawValue) }
}
