import DBus

/// The properties of `org.bluez.Battery1`, which the battery plugin puts on a device whose
/// Battery Service (0x180F) it claimed (bluez-dbus-api.md §14).
public struct BatteryProperties: BlueZInterfaceProperties {
    /// The property names.
    public enum Key {
        /// `Percentage` `y`
        public static let percentage = "Percentage"
        /// `Source` `s`
        public static let source = "Source"
    }

    /// `org.bluez.Battery1`
    public static var interface: InterfaceName { BlueZInterface.battery1 }

    /// `Percentage` `y`: the battery level, 0–100.
    public var percentage: UInt8
    /// `Source` `s`, optional: where the level comes from.
    public var source: String?

    /// Creates battery properties from their values.
    public init(percentage: UInt8, source: String? = nil) {
        self.percentage = percentage
        self.source = source
    }

    /// Decodes `Battery1` properties; see ``BlueZInterfaceProperties`` for the rules.
    public init(properties: [String: DBusValue]) throws(DBusError) {
        let reader = PropertyReader(Self.interface, properties)
        self.init(percentage: try reader.required(Key.percentage), source: try reader.optional(Key.source))
    }

    /// Applies a `PropertiesChanged` signal; see ``BlueZInterfaceProperties``.
    public mutating func apply(changed: [String: DBusValue], invalidated: [String]) throws(DBusError) {
        try applyChanges(to: &self, changed: changed, invalidated: invalidated)
    }

    /// The properties with their exact D-Bus types; absent optionals are left out.
    public var dbusProperties: [String: DBusValue] {
        var out: [String: DBusValue] = [Key.percentage: percentage.dbusValue]
        out[Key.source] = source?.dbusValue
        return out
    }
}

extension BatteryProperties: PropertyUpdating {
    mutating func update(_ key: String, _ value: DBusValue) throws(DBusError) {
        let decoding = PropertyDecoding(interface: Self.interface)
        switch key {
        case Key.percentage: percentage = try decoding.decode(key, value)
        case Key.source: source = try decoding.decode(key, value, as: String.self)
        default: break
        }
    }

    mutating func invalidate(_ key: String) {
        if key == Key.source { source = nil }
    }
}
