import DBus

/// The properties of `org.bluez.Adapter1` (bluez-dbus-api.md §2.3).
///
/// Version-dependent and optional properties are `Optional`: `Connectable` (≥5.79),
/// `PowerState` (experimental before 5.73), `Modalias`, `ExperimentalFeatures` (only when
/// non-empty), `Manufacturer` and `Version` (≥5.71).
public struct AdapterProperties: BlueZInterfaceProperties {
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
        /// `Connectable` `b`
        public static let connectable = "Connectable"
        /// `Powered` `b`
        public static let powered = "Powered"
        /// `PowerState` `s`
        public static let powerState = "PowerState"
        /// `Discoverable` `b`
        public static let discoverable = "Discoverable"
        /// `DiscoverableTimeout` `u`
        public static let discoverableTimeout = "DiscoverableTimeout"
        /// `Pairable` `b`
        public static let pairable = "Pairable"
        /// `PairableTimeout` `u`
        public static let pairableTimeout = "PairableTimeout"
        /// `Discovering` `b`
        public static let discovering = "Discovering"
        /// `UUIDs` `as`
        public static let uuids = "UUIDs"
        /// `Modalias` `s`
        public static let modalias = "Modalias"
        /// `Roles` `as`
        public static let roles = "Roles"
        /// `ExperimentalFeatures` `as`
        public static let experimentalFeatures = "ExperimentalFeatures"
        /// `Manufacturer` `q`
        public static let manufacturer = "Manufacturer"
        /// `Version` `y`
        public static let version = "Version"
    }

    /// `org.bluez.Adapter1`
    public static var interface: InterfaceName { BlueZInterface.adapter1 }

    /// `Address` `s`: the adapter's address.
    public var address: BluetoothAddress
    /// `AddressType` `s`: `public` or `random`.
    public var addressType: AddressType
    /// `Name` `s`: the system name.
    public var name: String
    /// `Alias` `s` (rw): the friendly name; setting `""` resets it to ``name``.
    public var alias: String
    /// `Class` `u`: the BR/EDR class of device.
    public var deviceClass: UInt32
    /// `Connectable` `b` (rw, ≥5.79).
    public var connectable: Bool?
    /// `Powered` `b` (rw).
    public var powered: Bool
    /// `PowerState` `s` (≥5.73; experimental before).
    public var powerState: PowerState?
    /// `Discoverable` `b` (rw).
    public var discoverable: Bool
    /// `DiscoverableTimeout` `u` (rw): seconds, default 180.
    public var discoverableTimeout: UInt32
    /// `Pairable` `b` (rw).
    public var pairable: Bool
    /// `PairableTimeout` `u` (rw): seconds, 0 = forever.
    public var pairableTimeout: UInt32
    /// `Discovering` `b`: true while at least one discovery session runs.
    public var discovering: Bool
    /// `UUIDs` `as`: local services.
    public var uuids: [String]
    /// `Modalias` `s`, optional.
    public var modalias: String?
    /// `Roles` `as`: `central`, `peripheral`, `central-peripheral`.
    public var roles: [String]
    /// `ExperimentalFeatures` `as`: present only when non-empty.
    public var experimentalFeatures: [String]?
    /// `Manufacturer` `q` (≥5.71): the controller's company identifier.
    public var manufacturer: UInt16?
    /// `Version` `y` (≥5.71): the controller's core version code.
    public var version: UInt8?

    /// Creates adapter properties from their values.
    public init(
        address: BluetoothAddress, addressType: AddressType = .public, name: String, alias: String,
        deviceClass: UInt32 = 0, connectable: Bool? = nil, powered: Bool, powerState: PowerState? = nil,
        discoverable: Bool = false, discoverableTimeout: UInt32 = 180, pairable: Bool = true,
        pairableTimeout: UInt32 = 0, discovering: Bool = false, uuids: [String] = [], modalias: String? = nil,
        roles: [String] = ["central", "peripheral"], experimentalFeatures: [String]? = nil,
        manufacturer: UInt16? = nil, version: UInt8? = nil
    ) {
        self.address = address
        self.addressType = addressType
        self.name = name
        self.alias = alias
        self.deviceClass = deviceClass
        self.connectable = connectable
        self.powered = powered
        self.powerState = powerState
        self.discoverable = discoverable
        self.discoverableTimeout = discoverableTimeout
        self.pairable = pairable
        self.pairableTimeout = pairableTimeout
        self.discovering = discovering
        self.uuids = uuids
        self.modalias = modalias
        self.roles = roles
        self.experimentalFeatures = experimentalFeatures
        self.manufacturer = manufacturer
        self.version = version
    }

    /// Decodes `Adapter1` properties; see ``BlueZInterfaceProperties`` for the rules.
    public init(properties: [String: DBusValue]) throws(DBusError) {
        let reader = PropertyReader(Self.interface, properties)
        self.init(
            address: try reader.required(Key.address),
            addressType: try reader.required(Key.addressType),
            name: try reader.required(Key.name),
            alias: try reader.required(Key.alias),
            deviceClass: try reader.required(Key.class),
            connectable: try reader.optional(Key.connectable),
            powered: try reader.required(Key.powered),
            powerState: try reader.optional(Key.powerState),
            discoverable: try reader.required(Key.discoverable),
            discoverableTimeout: try reader.required(Key.discoverableTimeout),
            pairable: try reader.required(Key.pairable),
            pairableTimeout: try reader.required(Key.pairableTimeout),
            discovering: try reader.required(Key.discovering),
            uuids: try reader.required(Key.uuids),
            modalias: try reader.optional(Key.modalias),
            roles: try reader.required(Key.roles),
            experimentalFeatures: try reader.optional(Key.experimentalFeatures),
            manufacturer: try reader.optional(Key.manufacturer),
            version: try reader.optional(Key.version))
    }

    /// Applies a `PropertiesChanged` signal; see ``BlueZInterfaceProperties``.
    public mutating func apply(changed: [String: DBusValue], invalidated: [String]) throws(DBusError) {
        try applyChanges(to: &self, changed: changed, invalidated: invalidated)
    }

    /// The properties with their exact D-Bus types; absent optionals are left out.
    public var dbusProperties: [String: DBusValue] {
        var out: [String: DBusValue] = [
            Key.address: address.dbusValue,
            Key.addressType: addressType.dbusValue,
            Key.name: name.dbusValue,
            Key.alias: alias.dbusValue,
            Key.class: deviceClass.dbusValue,
            Key.powered: powered.dbusValue,
            Key.discoverable: discoverable.dbusValue,
            Key.discoverableTimeout: discoverableTimeout.dbusValue,
            Key.pairable: pairable.dbusValue,
            Key.pairableTimeout: pairableTimeout.dbusValue,
            Key.discovering: discovering.dbusValue,
            Key.uuids: uuids.arrayValue,
            Key.roles: roles.arrayValue,
        ]
        out[Key.connectable] = connectable?.dbusValue
        out[Key.powerState] = powerState?.dbusValue
        out[Key.modalias] = modalias?.dbusValue
        out[Key.experimentalFeatures] = experimentalFeatures?.arrayValue
        out[Key.manufacturer] = manufacturer?.dbusValue
        out[Key.version] = version?.dbusValue
        return out
    }
}

extension AdapterProperties: PropertyUpdating {
    mutating func update(_ key: String, _ value: DBusValue) throws(DBusError) {
        let decoding = PropertyDecoding(interface: Self.interface)
        switch key {
        case Key.address: address = try decoding.decode(key, value)
        case Key.addressType: addressType = try decoding.decode(key, value)
        case Key.name: name = try decoding.decode(key, value)
        case Key.alias: alias = try decoding.decode(key, value)
        case Key.class: deviceClass = try decoding.decode(key, value)
        case Key.connectable: connectable = try decoding.decode(key, value, as: Bool.self)
        case Key.powered: powered = try decoding.decode(key, value)
        case Key.powerState: powerState = try decoding.decode(key, value, as: PowerState.self)
        case Key.discoverable: discoverable = try decoding.decode(key, value)
        case Key.discoverableTimeout: discoverableTimeout = try decoding.decode(key, value)
        case Key.pairable: pairable = try decoding.decode(key, value)
        case Key.pairableTimeout: pairableTimeout = try decoding.decode(key, value)
        case Key.discovering: discovering = try decoding.decode(key, value)
        case Key.uuids: uuids = try decoding.decode(key, value)
        case Key.modalias: modalias = try decoding.decode(key, value, as: String.self)
        case Key.roles: roles = try decoding.decode(key, value)
        case Key.experimentalFeatures: experimentalFeatures = try decoding.decode(key, value, as: [String].self)
        case Key.manufacturer: manufacturer = try decoding.decode(key, value, as: UInt16.self)
        case Key.version: version = try decoding.decode(key, value, as: UInt8.self)
        default: break
        }
    }

    mutating func invalidate(_ key: String) {
        switch key {
        case Key.connectable: connectable = nil
        case Key.powerState: powerState = nil
        case Key.modalias: modalias = nil
        case Key.experimentalFeatures: experimentalFeatures = nil
        case Key.manufacturer: manufacturer = nil
        case Key.version: version = nil
        default: break
        }
    }
}
