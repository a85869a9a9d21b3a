import DBus

/// The properties of `org.bluez.LEAdvertisingManager1` on an adapter (bluez-dbus-api.md §6.1).
///
/// `SupportedSecondaryChannels` is optional; `SupportedFeatures` and `SupportedCapabilities`
/// are experimental in 5.66, so optional too.
public struct LEAdvertisingManagerProperties: BlueZInterfaceProperties {
    /// The property names.
    public enum Key {
        /// `ActiveInstances` `y`
        public static let activeInstances = "ActiveInstances"
        /// `SupportedInstances` `y`
        public static let supportedInstances = "SupportedInstances"
        /// `SupportedIncludes` `as`
        public static let supportedIncludes = "SupportedIncludes"
        /// `SupportedSecondaryChannels` `as`
        public static let supportedSecondaryChannels = "SupportedSecondaryChannels"
        /// `SupportedFeatures` `as`
        public static let supportedFeatures = "SupportedFeatures"
        /// `SupportedCapabilities` `a{sv}`
        public static let supportedCapabilities = "SupportedCapabilities"
    }

    /// `org.bluez.LEAdvertisingManager1`
    public static var interface: InterfaceName { BlueZInterface.leAdvertisingManager1 }

    /// `ActiveInstances` `y`: advertisements registered now.
    public var activeInstances: UInt8
    /// `SupportedInstances` `y`: advertisements that can still be registered.
    public var supportedInstances: UInt8
    /// `SupportedIncludes` `as`: from `tx-power`, `appearance`, `local-name`, `rsi`.
    public var supportedIncludes: [String]
    /// `SupportedSecondaryChannels` `as`, optional: from `1M`, `2M`, `Coded`.
    public var supportedSecondaryChannels: [String]?
    /// `SupportedFeatures` `as`, optional: `CanSetTxPower`, `HardwareOffload`.
    public var supportedFeatures: [String]?
    /// `SupportedCapabilities` `a{sv}`, optional.
    public var supportedCapabilities: AdvertisingCapabilities?

    /// Creates advertising manager properties from their values.
    public init(
        activeInstances: UInt8 = 0, supportedInstances: UInt8, supportedIncludes: [String] = [],
        supportedSecondaryChannels: [String]? = nil, supportedFeatures: [String]? = nil,
        supportedCapabilities: AdvertisingCapabilities? = nil
    ) {
        self.activeInstances = activeInstances
        self.supportedInstances = supportedInstances
        self.supportedIncludes = supportedIncludes
        self.supportedSecondaryChannels = supportedSecondaryChannels
        self.supportedFeatures = supportedFeatures
        self.supportedCapabilities = supportedCapabilities
    }

    /// Decodes `LEAdvertisingManager1` properties; see ``BlueZInterfaceProperties`` for the rules.
    public init(properties: [String: DBusValue]) throws(DBusError) {
        let reader = PropertyReader(Self.interface, properties)
        var capabilities: AdvertisingCapabilities?
        if let value = properties[Key.supportedCapabilities] {
            capabilities = try Self.decodeCapabilities(reader.decoding, value)
        }
        self.init(
            activeInstances: try reader.required(Key.activeInstances),
            supportedInstances: try reader.required(Key.supportedInstances),
            supportedIncludes: try reader.required(Key.supportedIncludes),
            supportedSecondaryChannels: try reader.optional(Key.supportedSecondaryChannels),
            supportedFeatures: try reader.optional(Key.supportedFeatures),
            supportedCapabilities: capabilities)
    }

    /// Applies a `PropertiesChanged` signal; see ``BlueZInterfaceProperties``.
    public mutating func apply(changed: [String: DBusValue], invalidated: [String]) throws(DBusError) {
        try applyChanges(to: &self, changed: changed, invalidated: invalidated)
    }

    /// The properties with their exact D-Bus types; absent optionals are left out.
    public var dbusProperties: [String: DBusValue] {
        var out: [String: DBusValue] = [
            Key.activeInstances: activeInstances.dbusValue,
            Key.supportedInstances: supportedInstances.dbusValue,
            Key.supportedIncludes: supportedIncludes.arrayValue,
        ]
        out[Key.supportedSecondaryChannels] = supportedSecondaryChannels?.arrayValue
        out[Key.supportedFeatures] = supportedFeatures?.arrayValue
        out[Key.supportedCapabilities] = supportedCapabilities.map { PropertyEncoding.variantDictionary($0.entries) }
        return out
    }

    static func decodeCapabilities(
        _ decoding: PropertyDecoding, _ value: DBusValue
    ) throws(DBusError) -> AdvertisingCapabilities {
        let dictionary = try decoding.decodeVariantDictionary(Key.supportedCapabilities, value)
        return try AdvertisingCapabilities(dictionary, context: "\(decoding.context).\(Key.supportedCapabilities)")
    }
}

extension LEAdvertisingManagerProperties: PropertyUpdating {
    mutating func update(_ key: String, _ value: DBusValue) throws(DBusError) {
        let decoding = PropertyDecoding(interface: Self.interface)
        switch key {
        case Key.activeInstances: activeInstances = try decoding.decode(key, value)
        case Key.supportedInstances: supportedInstances = try decoding.decode(key, value)
        case Key.supportedIncludes: supportedIncludes = try decoding.decode(key, value)
        case Key.supportedSecondaryChannels:
            supportedSecondaryChannels = try decoding.decode(key, value, as: [String].self)
        case Key.supportedFeatures: supportedFeatures = try decoding.decode(key, value, as: [String].self)
        case Key.supportedCapabilities: supportedCapabilities = try Self.decodeCapabilities(decoding, value)
        default: break
        }
    }

    mutating func invalidate(_ key: String) {
        switch key {
        case Key.supportedSecondaryChannels: supportedSecondaryChannels = nil
        case Key.supportedFeatures: supportedFeatures = nil
        case Key.supportedCapabilities: supportedCapabilities = nil
        default: break
        }
    }
}
