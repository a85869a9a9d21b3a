import DBus

/// The argument of `Adapter1.SetDiscoveryFilter(a{sv})` (bluez-dbus-api.md §2.2).
///
/// Every key is optional; an empty filter removes the caller's filter. The types are exact and
/// bluetoothd rejects anything else with `InvalidArguments` (§9 Q26): `RSSI` is `n`, `Pathloss`
/// is `q` (bleak sends `n` and gets an error), `Transport` one of `auto`/`bredr`/`le`.
public struct DiscoveryFilter: Sendable, Hashable {
    /// The dictionary keys, in the order `GetDiscoveryFilters` returns them.
    public enum Key {
        /// `UUIDs` `as`
        public static let uuids = "UUIDs"
        /// `RSSI` `n`
        public static let rssi = "RSSI"
        /// `Pathloss` `q`
        public static let pathloss = "Pathloss"
        /// `Transport` `s`
        public static let transport = "Transport"
        /// `DuplicateData` `b`
        public static let duplicateData = "DuplicateData"
        /// `Discoverable` `b`
        public static let discoverable = "Discoverable"
        /// `Pattern` `s`
        public static let pattern = "Pattern"
        /// `AutoConnect` `b` (≥5.83)
        public static let autoConnect = "AutoConnect"
    }

    /// The keys `GetDiscoveryFilters` returns on 5.66 (newer versions add `AutoConnect`).
    public static let keys566 = [
        Key.uuids, Key.rssi, Key.pathloss, Key.transport, Key.duplicateData, Key.discoverable, Key.pattern,
    ]
    /// The keys `GetDiscoveryFilters` returns from 5.83.
    public static let keys583 = keys566 + [Key.autoConnect]

    /// `UUIDs` `as`: report only devices advertising one of these.
    public var uuids: [String]?
    /// `RSSI` `n`: report only devices at least this strong; −127…+20.
    public var rssi: Int16?
    /// `Pathloss` `q`: report only devices with at most this path loss; ≤137.
    public var pathloss: UInt16?
    /// `Transport` `s`.
    public var transport: DiscoveryTransport?
    /// `DuplicateData` `b`: report every advertisement (bluetoothd's default is false).
    public var duplicateData: Bool?
    /// `Discoverable` `b`: make the adapter discoverable while the session runs.
    public var discoverable: Bool?
    /// `Pattern` `s`: prefix of the address or name.
    public var pattern: String?
    /// `AutoConnect` `b` (≥5.83): connect to devices matching `Pattern`.
    public var autoConnect: Bool?

    /// Creates a filter; absent keys are left out of the dictionary.
    public init(
        uuids: [String]? = nil, rssi: Int16? = nil, pathloss: UInt16? = nil, transport: DiscoveryTransport? = nil,
        duplicateData: Bool? = nil, discoverable: Bool? = nil, pattern: String? = nil, autoConnect: Bool? = nil
    ) {
        self.uuids = uuids
        self.rssi = rssi
        self.pathloss = pathloss
        self.transport = transport
        self.duplicateData = duplicateData
        self.discoverable = discoverable
        self.pattern = pattern
        self.autoConnect = autoConnect
    }

    /// Decodes a filter dictionary (variants unwrapped or not), as bluetoothd parses it.
    ///
    /// - Throws: ``DBus/DBusError`` with code `.typeMismatch` for a wrong type and
    ///   `.invalidValue` for an unknown key; bluetoothd answers both with `InvalidArguments`.
    public init(dictionary: [String: DBusValue]) throws(DBusError) {
        let known = Set(Self.keys583)
        if let unknown = dictionary.keys.sorted().first(where: { !known.contains($0) }) {
            throw DBusError(.invalidValue, message: "SetDiscoveryFilter: unknown key \"\(unknown.prefix(40))\"")
        }
        let reader = PropertyReader(PropertyDecoding(context: "SetDiscoveryFilter"), dictionary)
        self.init(
            uuids: try reader.optional(Key.uuids),
            rssi: try reader.optional(Key.rssi),
            pathloss: try reader.optional(Key.pathloss),
            transport: try reader.optional(Key.transport),
            duplicateData: try reader.optional(Key.duplicateData),
            discoverable: try reader.optional(Key.discoverable),
            pattern: try reader.optional(Key.pattern),
            autoConnect: try reader.optional(Key.autoConnect))
    }

    /// The filter as name → value (not wrapped in variants); absent keys left out.
    public var dictionary: [String: DBusValue] {
        var out: [String: DBusValue] = [:]
        out[Key.uuids] = uuids?.arrayValue
        out[Key.rssi] = rssi?.dbusValue
        out[Key.pathloss] = pathloss?.dbusValue
        out[Key.transport] = transport?.dbusValue
        out[Key.duplicateData] = duplicateData?.dbusValue
        out[Key.discoverable] = discoverable?.dbusValue
        out[Key.pattern] = pattern?.dbusValue
        out[Key.autoConnect] = autoConnect?.dbusValue
        return out
    }

    /// The `a{sv}` argument of `SetDiscoveryFilter`.
    public var dbusValue: DBusValue { ObjectManagerCoding.encodeProperties(dictionary) }

    /// Checks the value rules bluetoothd applies after the types: RSSI in −127…+20, Pathloss at
    /// most 137, not both RSSI and Pathloss, Transport `auto`, `bredr` or `le`. UUID strings are
    /// not parsed here.
    ///
    /// - Throws: ``DBus/DBusError`` with code `.invalidValue` naming the broken rule.
    public func validate() throws(DBusError) {
        if let rssi, !(-127...20).contains(rssi) {
            throw DBusError(.invalidValue, message: "SetDiscoveryFilter: RSSI \(rssi) is outside -127...20")
        }
        if let pathloss, pathloss > 137 {
            throw DBusError(.invalidValue, message: "SetDiscoveryFilter: Pathloss \(pathloss) is above 137")
        }
        if rssi != nil && pathloss != nil {
            throw DBusError(.invalidValue, message: "SetDiscoveryFilter: RSSI and Pathloss cannot be combined")
        }
        if let transport, ![DiscoveryTransport.auto, .bredr, .le].contains(transport) {
            throw DBusError(
                .invalidValue, message: "SetDiscoveryFilter: Transport \"\(transport.rawValue.prefix(40))\" is unknown")
        }
    }
}
