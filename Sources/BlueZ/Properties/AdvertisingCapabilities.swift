import DBus

/// `LEAdvertisingManager1.SupportedCapabilities` `a{sv}` (bluez-dbus-api.md §6.1): the
/// controller's advertising limits. Each key is optional; the TX power keys appear only when
/// the controller reports them. Keys this module does not know are kept in ``other``.
public struct AdvertisingCapabilities: Sendable, Hashable {
    /// The dictionary keys.
    public enum Key {
        /// `MaxAdvLen` `y`
        public static let maxAdvertisingDataLength = "MaxAdvLen"
        /// `MaxScnRspLen` `y`
        public static let maxScanResponseLength = "MaxScnRspLen"
        /// `MinTxPower` `n`
        public static let minTxPower = "MinTxPower"
        /// `MaxTxPower` `n`
        public static let maxTxPower = "MaxTxPower"
    }

    /// `MaxAdvLen` `y`: the longest advertising data, in bytes.
    public var maxAdvertisingDataLength: UInt8?
    /// `MaxScnRspLen` `y`: the longest scan response, in bytes.
    public var maxScanResponseLength: UInt8?
    /// `MinTxPower` `n`: dBm.
    public var minTxPower: Int16?
    /// `MaxTxPower` `n`: dBm.
    public var maxTxPower: Int16?
    /// Entries with other keys, values unwrapped from their variants.
    public var other: [String: DBusValue]

    /// Creates capabilities from their values.
    public init(
        maxAdvertisingDataLength: UInt8? = nil, maxScanResponseLength: UInt8? = nil, minTxPower: Int16? = nil,
        maxTxPower: Int16? = nil, other: [String: DBusValue] = [:]
    ) {
        self.maxAdvertisingDataLength = maxAdvertisingDataLength
        self.maxScanResponseLength = maxScanResponseLength
        self.minTxPower = minTxPower
        self.maxTxPower = maxTxPower
        self.other = other
    }

    /// Decodes the dictionary (variants unwrapped), checking the types of the known keys;
    /// errors name `context`, e.g. `org.bluez.LEAdvertisingManager1.SupportedCapabilities`.
    init(_ dictionary: [String: DBusValue], context: String) throws(DBusError) {
        let reader = PropertyReader(PropertyDecoding(context: context), dictionary)
        self.init(
            maxAdvertisingDataLength: try reader.optional(Key.maxAdvertisingDataLength),
            maxScanResponseLength: try reader.optional(Key.maxScanResponseLength),
            minTxPower: try reader.optional(Key.minTxPower),
            maxTxPower: try reader.optional(Key.maxTxPower))
        let known: Set = [Key.maxAdvertisingDataLength, Key.maxScanResponseLength, Key.minTxPower, Key.maxTxPower]
        other = dictionary.filter { !known.contains($0.key) }
    }

    /// The dictionary entries, values not yet wrapped in variants.
    var entries: [String: DBusValue] {
        var out = other
        out[Key.maxAdvertisingDataLength] = maxAdvertisingDataLength?.dbusValue
        out[Key.maxScanResponseLength] = maxScanResponseLength?.dbusValue
        out[Key.minTxPower] = minTxPower?.dbusValue
        out[Key.maxTxPower] = maxTxPower?.dbusValue
        return out
    }
}
