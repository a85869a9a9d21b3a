import DBus
import Foundation

/// The properties of `org.bluez.Device1` (bluez-dbus-api.md §3.2).
///
/// Optional properties are absent until known (`Name`, `RSSI`, advertising data…) and are
/// removed through `invalidated` (RSSI and TxPower when discovery stops, §3.6); version-dependent
/// ones are optional too: `Bonded` (≥5.65), `CablePairing` (≥5.83), `AdvertisingFlags` and
/// `AdvertisingData` (experimental before 5.78), `Sets` (≥5.67), `PreferredBearer` (≥5.80).
public struct DeviceProperties: BlueZInterfaceProperties {
    /// The property names.
    public enum Key {
        /// `Address` `s`
        public static let address = "Address"
        /// `AddressType` `s`
        public static let addressType = "AddressType"
        /// `Name` `s`
        public static let name = "Name"
        /// `Alias` `s`
        public static let alias = "Alias"
        /// `Class` `u`
        public static let `class` = "Class"
        /// `Appearance` `q`
        public static let appearance = "Appearance"
        /// `Icon` `s`
        public static let icon = "Icon"
        /// `Paired` `b`
        public static let paired = "Paired"
        /// `Bonded` `b`
        public static let bonded = "Bonded"
        /// `Trusted` `b`
        public static let trusted = "Trusted"
        /// `Blocked` `b`
        public static let blocked = "Blocked"
        /// `LegacyPairing` `b`
        public static let legacyPairing = "LegacyPairing"
        /// `CablePairing` `b`
        public static let cablePairing = "CablePairing"
        /// `RSSI` `n`
        public static let rssi = "RSSI"
        /// `TxPower` `n`
        public static let txPower = "TxPower"
        /// `Connected` `b`
        public static let connected = "Connected"
        /// `UUIDs` `as`
        public static let uuids = "UUIDs"
        /// `Modalias` `s`
        public static let modalias = "Modalias"
        /// `Adapter` `o`
        public static let adapter = "Adapter"
        /// `ManufacturerData` `a{qv}`
        public static let manufacturerData = "ManufacturerData"
        /// `ServiceData` `a{sv}`
        public static let serviceData = "ServiceData"
        /// `ServicesResolved` `b`
        public static let servicesResolved = "ServicesResolved"
        /// `AdvertisingFlags` `ay`
        public static let advertisingFlags = "AdvertisingFlags"
        /// `AdvertisingData` `a{yv}`
        public static let advertisingData = "AdvertisingData"
        /// `WakeAllowed` `b`
        public static let wakeAllowed = "WakeAllowed"
        /// `Sets` `a{oa{sv}}`
        public static let sets = "Sets"
        /// `PreferredBearer` `s`
        public static let preferredBearer = "PreferredBearer"
    }

    /// `org.bluez.Device1`
    public static var interface: InterfaceName { BlueZInterface.device1 }

    /// `Address` `s`; may change after pairing with a device that uses a private address.
    public var address: BluetoothAddress
    /// `AddressType` `s`: `public` or `random`.
    public var addressType: AddressType
    /// `Name` `s`, optional: only when a name is known.
    public var name: String?
    /// `Alias` `s` (rw): never empty; without a name it is the address with '-' separators
    /// (``BluetoothAddress/aliasFallback``).
    public var alias: String
    /// `Class` `u`, optional: BR/EDR class of device.
    public var deviceClass: UInt32?
    /// `Appearance` `q`, optional.
    public var appearance: UInt16?
    /// `Icon` `s`, optional.
    public var icon: String?
    /// `Paired` `b`.
    public var paired: Bool
    /// `Bonded` `b` (≥5.65).
    public var bonded: Bool?
    /// `Trusted` `b` (rw).
    public var trusted: Bool
    /// `Blocked` `b` (rw).
    public var blocked: Bool
    /// `LegacyPairing` `b`.
    public var legacyPairing: Bool
    /// `CablePairing` `b` (≥5.83).
    public var cablePairing: Bool?
    /// `RSSI` `n`, optional: present while the last advertisement's RSSI is known.
    public var rssi: Int16?
    /// `TxPower` `n`, optional: the advertised transmit power.
    public var txPower: Int16?
    /// `Connected` `b`.
    public var connected: Bool
    /// `UUIDs` `as`: advertised UUIDs before service resolution, resolved services after.
    public var uuids: [String]
    /// `Modalias` `s`, optional.
    public var modalias: String?
    /// `Adapter` `o`: the adapter the device belongs to.
    public var adapter: ObjectPath
    /// `ManufacturerData` `a{qv}` (each variant an `ay`), optional: company id → data. Entries
    /// accumulate while scanning; a change carries the whole dictionary.
    public var manufacturerData: [UInt16: Data]?
    /// `ServiceData` `a{sv}` (each variant an `ay`), optional: 128-bit UUID string → data.
    public var serviceData: [String: Data]?
    /// `ServicesResolved` `b`: the GATT objects exist and are current.
    public var servicesResolved: Bool
    /// `AdvertisingFlags` `ay`, optional.
    public var advertisingFlags: Data?
    /// `AdvertisingData` `a{yv}` (each variant an `ay`), optional: AD type → data.
    public var advertisingData: [UInt8: Data]?
    /// `WakeAllowed` `b` (rw), optional.
    public var wakeAllowed: Bool?
    /// `Sets` `a{oa{sv}}` (≥5.67), optional: coordinated set path → its properties (variants
    /// unwrapped).
    public var sets: [ObjectPath: [String: DBusValue]]?
    /// `PreferredBearer` `s` (rw, ≥5.80, experimental), optional.
    public var preferredBearer: String?

    /// Creates device properties from their values.
    public init(
        address: BluetoothAddress, addressType: AddressType = .public, name: String? = nil, alias: String? = nil,
        deviceClass: UInt32? = nil, appearance: UInt16? = nil, icon: String? = nil, paired: Bool = false,
        bonded: Bool? = false, trusted: Bool = false, blocked: Bool = false, legacyPairing: Bool = false,
        cablePairing: Bool? = nil, rssi: Int16? = nil, txPower: Int16? = nil, connected: Bool = false,
        uuids: [String] = [], modalias: String? = nil, adapter: ObjectPath,
        manufacturerData: [UInt16: Data]? = nil, serviceData: [String: Data]? = nil,
        servicesResolved: Bool = false, advertisingFlags: Data? = nil, advertisingData: [UInt8: Data]? = nil,
        wakeAllowed: Bool? = nil, sets: [ObjectPath: [String: DBusValue]]? = nil, preferredBearer: String? = nil
    ) {
        self.address = address
        self.addressType = addressType
        self.name = name
        self.alias = alias ?? name ?? address.aliasFallback
        self.deviceClass = deviceClass
        self.appearance = appearance
        self.icon = icon
        self.paired = paired
        self.bonded = bonded
        self.trusted = trusted
        self.blocked = blocked
        self.legacyPairing = legacyPairing
        self.cablePairing = cablePairing
        self.rssi = rssi
        self.txPower = txPower
        self.connected = connected
        self.uuids = uuids
        self.modalias = modalias
        self.adapter = adapter
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.servicesResolved = servicesResolved
        self.advertisingFlags = advertisingFlags
        self.advertisingData = advertisingData
        self.wakeAllowed = wakeAllowed
        self.sets = sets
        self.preferredBearer = preferredBearer
    }

    /// Decodes `Device1` properties; see ``BlueZInterfaceProperties`` for the rules.
    public init(properties: [String: DBusValue]) throws(DBusError) {
        let reader = PropertyReader(Self.interface, properties)
        self.init(
            address: try reader.required(Key.address),
            addressType: try reader.required(Key.addressType),
            name: try reader.optional(Key.name),
            alias: try reader.required(Key.alias, as: String.self),
            deviceClass: try reader.optional(Key.class),
            appearance: try reader.optional(Key.appearance),
            icon: try reader.optional(Key.icon),
            paired: try reader.required(Key.paired),
            bonded: try reader.optional(Key.bonded),
            trusted: try reader.required(Key.trusted),
            blocked: try reader.required(Key.blocked),
            legacyPairing: try reader.required(Key.legacyPairing),
            cablePairing: try reader.optional(Key.cablePairing),
            rssi: try reader.optional(Key.rssi),
            txPower: try reader.optional(Key.txPower),
            connected: try reader.required(Key.connected),
            uuids: try reader.required(Key.uuids),
            modalias: try reader.optional(Key.modalias),
            adapter: try reader.required(Key.adapter),
            manufacturerData: try reader.optionalByteMap(Key.manufacturerData),
            serviceData: try reader.optionalByteMap(Key.serviceData),
            servicesResolved: try reader.required(Key.servicesResolved),
            advertisingFlags: try reader.optional(Key.advertisingFlags),
            advertisingData: try reader.optionalByteMap(Key.advertisingData),
            wakeAllowed: try reader.optional(Key.wakeAllowed),
            sets: try Self.decodeSets(reader),
            preferredBearer: try reader.optional(Key.preferredBearer))
    }

    /// Applies a `PropertiesChanged` signal; see ``BlueZInterfaceProperties``.
    public mutating func apply(changed: [String: DBusValue], invalidated: [String]) throws(DBusError) {
        try applyChanges(to: &self, changed: changed, invalidated: invalidated)
    }

    /// Whether the device uses a private address (random, RPA or NRPA), which bluetoothd never
    /// stores: such a device object vanishes `TemporaryTimeout` after the link drops (§3.7).
    public var hasPrivateAddress: Bool { address.isPrivate(addressType: addressType) }

    /// The properties with their exact D-Bus types; absent optionals are left out.
    public var dbusProperties: [String: DBusValue] {
        var out: [String: DBusValue] = [
            Key.address: address.dbusValue,
            Key.addressType: addressType.dbusValue,
            Key.alias: alias.dbusValue,
            Key.paired: paired.dbusValue,
            Key.trusted: trusted.dbusValue,
            Key.blocked: blocked.dbusValue,
            Key.legacyPairing: legacyPairing.dbusValue,
            Key.connected: connected.dbusValue,
            Key.uuids: uuids.arrayValue,
            Key.adapter: adapter.dbusValue,
            Key.servicesResolved: servicesResolved.dbusValue,
        ]
        out[Key.name] = name?.dbusValue
        out[Key.class] = deviceClass?.dbusValue
        out[Key.appearance] = appearance?.dbusValue
        out[Key.icon] = icon?.dbusValue
        out[Key.bonded] = bonded?.dbusValue
        out[Key.cablePairing] = cablePairing?.dbusValue
        out[Key.rssi] = rssi?.dbusValue
        out[Key.txPower] = txPower?.dbusValue
        out[Key.modalias] = modalias?.dbusValue
        out[Key.manufacturerData] = manufacturerData.map(PropertyEncoding.byteMap)
        out[Key.serviceData] = serviceData.map(PropertyEncoding.byteMap)
        out[Key.advertisingFlags] = advertisingFlags?.dbusValue
        out[Key.advertisingData] = advertisingData.map(PropertyEncoding.byteMap)
        out[Key.wakeAllowed] = wakeAllowed?.dbusValue
        out[Key.sets] = sets.map(Self.encodeSets)
        out[Key.preferredBearer] = preferredBearer?.dbusValue
        return out
    }

    /// The type of `Sets`.
    static let setsType = DBusType.dictionary(key: .objectPath, value: .dictionary(key: .string, value: .variant))

    private static func decodeSets(_ reader: PropertyReader) throws(DBusError) -> [ObjectPath: [String: DBusValue]]? {
        guard let value = reader.properties[Key.sets] else { return nil }
        return try decodeSets(reader.decoding, value)
    }

    static func decodeSets(
        _ decoding: PropertyDecoding, _ value: DBusValue
    ) throws(DBusError) -> [ObjectPath: [String: DBusValue]] {
        let inner = PropertyDecoding.unwrapped(value)
        guard inner.type == setsType, case .dictionary(_, _, let entries) = inner else {
            throw decoding.mismatch(Key.sets, expected: setsType, got: inner)
        }
        var out: [ObjectPath: [String: DBusValue]] = [:]
        for entry in entries {
            guard case .objectPath(let path) = entry.key else {
                throw decoding.mismatch(Key.sets, expected: setsType, got: inner)
            }
            out[path] = try decoding.decodeVariantDictionary(Key.sets, entry.value)
        }
        return out
    }

    private static func encodeSets(_ sets: [ObjectPath: [String: DBusValue]]) -> DBusValue {
        .dictionary(
            key: .objectPath, value: .dictionary(key: .string, value: .variant),
            sets.sorted { $0.key < $1.key }.map {
                DBusDictionaryEntry(.objectPath($0.key), PropertyEncoding.variantDictionary($0.value))
            })
    }
}

extension DeviceProperties: PropertyUpdating {
    mutating func update(_ key: String, _ value: DBusValue) throws(DBusError) {
        let decoding = PropertyDecoding(interface: Self.interface)
        switch key {
        case Key.address: address = try decoding.decode(key, value)
        case Key.addressType: addressType = try decoding.decode(key, value)
        case Key.name: name = try decoding.decode(key, value, as: String.self)
        case Key.alias: alias = try decoding.decode(key, value)
        case Key.class: deviceClass = try decoding.decode(key, value, as: UInt32.self)
        case Key.appearance: appearance = try decoding.decode(key, value, as: UInt16.self)
        case Key.icon: icon = try decoding.decode(key, value, as: String.self)
        case Key.paired: paired = try decoding.decode(key, value)
        case Key.bonded: bonded = try decoding.decode(key, value, as: Bool.self)
        case Key.trusted: trusted = try decoding.decode(key, value)
        case Key.blocked: blocked = try decoding.decode(key, value)
        case Key.legacyPairing: legacyPairing = try decoding.decode(key, value)
        case Key.cablePairing: cablePairing = try decoding.decode(key, value, as: Bool.self)
        case Key.rssi: rssi = try decoding.decode(key, value, as: Int16.self)
        case Key.txPower: txPower = try decoding.decode(key, value, as: Int16.self)
        case Key.connected: connected = try decoding.decode(key, value)
        case Key.uuids: uuids = try decoding.decode(key, value)
        case Key.modalias: modalias = try decoding.decode(key, value, as: String.self)
        case Key.adapter: adapter = try decoding.decode(key, value)
        case Key.manufacturerData: manufacturerData = try decoding.decodeByteMap(key, value, keyType: UInt16.self)
        case Key.serviceData: serviceData = try decoding.decodeByteMap(key, value, keyType: String.self)
        case Key.servicesResolved: servicesResolved = try decoding.decode(key, value)
        case Key.advertisingFlags: advertisingFlags = try decoding.decode(key, value, as: Data.self)
        case Key.advertisingData: advertisingData = try decoding.decodeByteMap(key, value, keyType: UInt8.self)
        case Key.wakeAllowed: wakeAllowed = try decoding.decode(key, value, as: Bool.self)
        case Key.sets: sets = try Self.decodeSets(decoding, value)
        case Key.preferredBearer: preferredBearer = try decoding.decode(key, value, as: String.self)
        default: break
        }
    }

    mutating func invalidate(_ key: String) {
        switch key {
        case Key.name: name = nil
        case Key.class: deviceClass = nil
        case Key.appearance: appearance = nil
        case Key.icon: icon = nil
        case Key.bonded: bonded = nil
        case Key.cablePairing: cablePairing = nil
        case Key.rssi: rssi = nil
        case Key.txPower: txPower = nil
        case Key.modalias: modalias = nil
        case Key.manufacturerData: manufacturerData = nil
        case Key.serviceData: serviceData = nil
        case Key.advertisingFlags: advertisingFlags = nil
        case Key.advertisingData: advertisingData = nil
        case Key.wakeAllowed: wakeAllowed = nil
        case Key.sets: sets = nil
        case Key.preferredBearer: preferredBearer = nil
        default: break
        }
    }
}
