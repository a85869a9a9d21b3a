import DBus

/// The typed properties of one BlueZ interface, decoded from a property dictionary.
///
/// Dictionaries map property names to their values; a value may still be wrapped in its
/// `v` variant (one level is unwrapped), so both a `GetAll` reply and the values kept by
/// ``BlueZObjectTree`` decode. Decoding is strict about what it knows and silent about what it
/// does not:
/// - a required property that is missing throws ``DBus/DBusError`` with code `.typeMismatch`;
/// - a known property with another D-Bus type than BlueZ's throws the same, naming the interface
///   and the property (`org.bluez.Device1.RSSI: expected n, got q`);
/// - unknown property names are ignored: newer BlueZ versions add properties.
public protocol BlueZInterfaceProperties: Sendable, Hashable {
    /// The interface these properties belong to, e.g. `org.bluez.Device1`.
    static var interface: InterfaceName { get }

    /// Decodes the properties of one object, e.g. one entry of a `GetManagedObjects` reply.
    init(properties: [String: DBusValue]) throws(DBusError)

    /// Applies a `PropertiesChanged` signal: `changed` values replace the current ones and
    /// `invalidated` optional properties become `nil`.
    ///
    /// Unknown names are ignored in both; invalidating a required property is ignored too (BlueZ
    /// never does it). On error nothing is applied.
    mutating func apply(changed: [String: DBusValue], invalidated: [String]) throws(DBusError)

    /// The properties as BlueZ exports them: each value with its exact D-Bus type (not wrapped
    /// in a variant), absent optionals left out.
    var dbusProperties: [String: DBusValue] { get }
}
