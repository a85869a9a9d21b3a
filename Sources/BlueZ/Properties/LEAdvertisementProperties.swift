import DBus
import Foundation

/// The properties of `org.bluez.LEAdvertisement1`, which an application exports and
/// bluetoothd reads with `GetAll` when it is registered (bluez-dbus-api.md §6.2).
///
/// Only `Type` is required. bluetoothd checks more than types when it parses an advertisement
/// (e.g. a `ManufacturerData` value must be a non-empty `ay`, `Discoverable` is not allowed with
/// `broadcast`, `MinInterval` ≤ `MaxInterval`); those are the simulator's business, not the
/// decoder's. The `ScanResponse…` properties are experimental and absent from 5.66.
public struct LEAdvertisementProperties: BlueZInterfaceProperties {
    /// The property names.
    public enum Key {
        /// `Type` `s`
        public static let type = "Type"
        /// `ServiceUUIDs` `as`
        public static let serviceUUIDs = "ServiceUUIDs"
        /// `ManufacturerData` `a{qv}`
        public static let manufacturerData = "ManufacturerData"
        /// `SolicitUUIDs` `as`
        public static let solicitUUIDs = "SolicitUUIDs"
        /// `ServiceData` `a{sv}`
        public static let serviceData = "ServiceData"
        /// `Data` `a{yv}`
        public static let data = "Data"
        /// `ScanResponseServiceUUIDs` `as`
        public static let scanResponseServiceUUIDs = "ScanResponseServiceUUIDs"
        /// `ScanResponseManufacturerData` `a{qv}`
        public static let scanResponseManufacturerData = "ScanResponseManufacturerData"
        /// `ScanResponseSolicitUUIDs` `as`
        public static let scanResponseSolicitUUIDs = "ScanResponseSolicitUUIDs"
        /// `ScanResponseServiceData` `a{sv}`
        public static let scanResponseServiceData = "ScanResponseServiceData"
        /// `ScanResponseData` `a{yv}`
        public static let scanResponseData = "ScanResponseData"
        /// `Discoverable` `b`
        public static let discoverable = "Discoverable"
        /// `DiscoverableTimeout` `q`
        public static let discoverableTimeout = "DiscoverableTimeout"
        /// `Includes` `as`
        public static let includes = "Includes"
        /// `LocalName` `s`
        public static let localName = "LocalName"
        /// `Appearance` `q`
        public static let appearance = "Appearance"
        /// `Duration` `q`
        public static let duration = "Duration"
        /// `Timeout` `q`
        public static let timeout = "Timeout"
        /// `SecondaryChannel` `s`
        public static let secondaryChannel = "SecondaryChannel"
        /// `MinInterval` `u`
        public static let minInterval = "MinInterval"
        /// `MaxInterval` `u`
        public static let maxInterval = "MaxInterval"
        /// `TxPower` `n`
        public static let txPower = "TxPower"
        /// `Instance` `y`
        public static let instance = "Instance"
    }

    /// `org.bluez.LEAdvertisement1`
    public static var interface: InterfaceName { BlueZInterface.leAdvertisement1 }

    /// `Type` `s`: `broadcast` or `peripheral`.
    public var type: AdvertisementType
    /// `ServiceUUIDs` `as`.
    public var serviceUUIDs: [String]?
    /// `ManufacturerData` `a{qv}` (each variant an `ay`): company id → data.
    public var manufacturerData: [UInt16: Data]?
    /// `SolicitUUIDs` `as`.
    public var solicitUUIDs: [String]?
    /// `ServiceData` `a{sv}` (each variant an `ay`): UUID → data.
    public var serviceData: [String: Data]?
    /// `Data` `a{yv}` (each variant an `ay`): raw AD type → data.
    public var data: [UInt8: Data]?
    /// `ScanResponseServiceUUIDs` `as` (experimental).
    public var scanResponseServiceUUIDs: [String]?
    /// `ScanResponseManufacturerData` `a{qv}` (experimental).
    public var scanResponseManufacturerData: [UInt16: Data]?
    /// `ScanResponseSolicitUUIDs` `as` (experimental).
    public var scanResponseSolicitUUIDs: [String]?
    /// `ScanResponseServiceData` `a{sv}` (experimental).
    public var scanResponseServiceData: [String: Data]?
    /// `ScanResponseData` `a{yv}` (experimental).
    public var scanResponseData: [UInt8: Data]?
    /// `Discoverable` `b`: not allowed with `broadcast`.
    public var discoverable: Bool?
    /// `DiscoverableTimeout` `q`: seconds.
    public var discoverableTimeout: UInt16?
    /// `Includes` `as`: values of `SupportedIncludes`.
    public var includes: [String]?
    /// `LocalName` `s`.
    public var localName: String?
    /// `Appearance` `q`.
    public var appearance: UInt16?
    /// `Duration` `q`: rotation time in seconds.
    public var duration: UInt16?
    /// `Timeout` `q`: lifetime in seconds.
    public var timeout: UInt16?
    /// `SecondaryChannel` `s`: `1M`, `2M` or `Coded`.
    public var secondaryChannel: String?
    /// `MinInterval` `u`: milliseconds.
    public var minInterval: UInt32?
    /// `MaxInterval` `u`: milliseconds.
    public var maxInterval: UInt32?
    /// `TxPower` `n`: dBm, −127…+20.
    public var txPower: Int16?
    /// `Instance` `y` (≥5.87, rw): written by bluetoothd after registration.
    public var instance: UInt8?

    /// Creates advertisement properties; everything but the type starts absent.
    public init(type: AdvertisementType) {
        self.type = type
    }

    /// Decodes `LEAdvertisement1` properties; see ``BlueZInterfaceProperties`` for the rules.
    public init(properties: [String: DBusValue]) throws(DBusError) {
        let reader = PropertyReader(Self.interface, properties)
        self.init(type: try reader.required(Key.type))
        serviceUUIDs = try reader.optional(Key.serviceUUIDs)
        manufacturerData = try reader.optionalByteMap(Key.manufacturerData)
        solicitUUIDs = try reader.optional(Key.solicitUUIDs)
        serviceData = try reader.optionalByteMap(Key.serviceData)
        data = try reader.optionalByteMap(Key.data)
        scanResponseServiceUUIDs = try reader.optional(Key.scanResponseServiceUUIDs)
        scanResponseManufacturerData = try reader.optionalByteMap(Key.scanResponseManufacturerData)
        scanResponseSolicitUUIDs = try reader.optional(Key.scanResponseSolicitUUIDs)
        scanResponseServiceData = try reader.optionalByteMap(Key.scanResponseServiceData)
        scanResponseData = try reader.optionalByteMap(Key.scanResponseData)
        discoverable = try reader.optional(Key.discoverable)
        discoverableTimeout = try reader.optional(Key.discoverableTimeout)
        includes = try reader.optional(Key.includes)
        localName = try reader.optional(Key.localName)
        appearance = try reader.optional(Key.appearance)
        duration = try reader.optional(Key.duration)
        timeout = try reader.optional(Key.timeout)
        secondaryChannel = try reader.optional(Key.secondaryChannel)
        minInterval = try reader.optional(Key.minInterval)
        maxInterval = try reader.optional(Key.maxInterval)
        txPower = try reader.optional(Key.txPower)
        instance = try reader.optional(Key.instance)
    }

    /// Applies a `PropertiesChanged` signal; see ``BlueZInterfaceProperties``.
    public mutating func apply(changed: [String: DBusValue], invalidated: [String]) throws(DBusError) {
        try applyChanges(to: &self, changed: changed, invalidated: invalidated)
    }

    /// The properties with their exact D-Bus types; absent optionals are left out.
    public var dbusProperties: [String: DBusValue] {
        var out: [String: DBusValue] = [Key.type: type.dbusValue]
        out[Key.serviceUUIDs] = serviceUUIDs?.arrayValue
        out[Key.manufacturerData] = manufacturerData.map(PropertyEncoding.byteMap)
        out[Key.solicitUUIDs] = solicitUUIDs?.arrayValue
        out[Key.serviceData] = serviceData.map(PropertyEncoding.byteMap)
        out[Key.data] = data.map(PropertyEncoding.byteMap)
        out[Key.scanResponseServiceUUIDs] = scanResponseServiceUUIDs?.arrayValue
        out[Key.scanResponseManufacturerData] = scanResponseManufacturerData.map(PropertyEncoding.byteMap)
        out[Key.scanResponseSolicitUUIDs] = scanResponseSolicitUUIDs?.arrayValue
        out[Key.scanResponseServiceData] = scanResponseServiceData.map(PropertyEncoding.byteMap)
        out[Key.scanResponseData] = scanResponseData.map(PropertyEncoding.byteMap)
        out[Key.discoverable] = discoverable?.dbusValue
        out[Key.discoverableTimeout] = discoverableTimeout?.dbusValue
        out[Key.includes] = includes?.arrayValue
        out[Key.localName] = localName?.dbusValue
        out[Key.appearance] = appearance?.dbusValue
        out[Key.duration] = duration?.dbusValue
        out[Key.timeout] = timeout?.dbusValue
        out[Key.secondaryChannel] = secondaryChannel?.dbusValue
        out[Key.minInterval] = minInterval?.dbusValue
        out[Key.maxInterval] = maxInterval?.dbusValue
        out[Key.txPower] = txPower?.dbusValue
        out[Key.instance] = instance?.dbusValue
        return out
    }
}

extension LEAdvertisementProperties: PropertyUpdating {
    mutating func update(_ key: String, _ value: DBusValue) throws(DBusError) {
        let decoding = PropertyDecoding(interface: Self.interface)
        switch key {
        case Key.type: type = try decoding.decode(key, value)
        case Key.serviceUUIDs: serviceUUIDs = try decoding.decode(key, value, as: [String].self)
        case Key.manufacturerData: manufacturerData = try decoding.decodeByteMap(key, value, keyType: UInt16.self)
        case Key.solicitUUIDs: solicitUUIDs = try decoding.decode(key, value, as: [String].self)
        case Key.serviceData: serviceData = try decoding.decodeByteMap(key, value, keyType: String.self)
        case Key.data: data = try decoding.decodeByteMap(key, value, keyType: UInt8.self)
        case Key.scanResponseServiceUUIDs:
            scanResponseServiceUUIDs = try decoding.decode(key, value, as: [String].self)
        case Key.scanResponseManufacturerData:
            scanResponseManufacturerData = try decoding.decodeByteMap(key, value, keyType: UInt16.self)
        case Key.scanResponseSolicitUUIDs:
            scanResponseSolicitUUIDs = try decoding.decode(key, value, as: [String].self)
        case Key.scanResponseServiceData:
            scanResponseServiceData = try decoding.decodeByteMap(key, value, keyType: String.self)
        case Key.scanResponseData: scanResponseData = try decoding.decodeByteMap(key, value, keyType: UInt8.self)
        case Key.discoverable: discoverable = try decoding.decode(key, value, as: Bool.self)
        case Key.discoverableTimeout: discoverableTimeout = try decoding.decode(key, value, as: UInt16.self)
        case Key.includes: includes = try decoding.decode(key, value, as: [String].self)
        case Key.localName: localName = try decoding.decode(key, value, as: String.self)
        case Key.appearance: appearance = try decoding.decode(key, value, as: UInt16.self)
        case Key.duration: duration = try decoding.decode(key, value, as: UInt16.self)
        case Key.timeout: timeout = try decoding.decode(key, value, as: UInt16.self)
        case Key.secondaryChannel: secondaryChannel = try decoding.decode(key, value, as: String.self)
        case Key.minInterval: minInterval = try decoding.decode(key, value, as: UInt32.self)
        case Key.maxInterval: maxInterval = try decoding.decode(key, value, as: UInt32.self)
        case Key.txPower: txPower = try decoding.decode(key, value, as: Int16.self)
        case Key.instance: instance = try decoding.decode(key, value, as: UInt8.self)
        default: break
        }
    }

    mutating func invalidate(_ key: String) {
        switch key {
        case Key.serviceUUIDs: serviceUUIDs = nil
        case Key.manufacturerData: manufacturerData = nil
        case Key.solicitUUIDs: solicitUUIDs = nil
        case Key.serviceData: serviceData = nil
        case Key.data: data = nil
        case Key.scanResponseServiceUUIDs: scanResponseServiceUUIDs = nil
        case Key.scanResponseManufacturerData: scanResponseManufacturerData = nil
        case Key.scanResponseSolicitUUIDs: scanResponseSolicitUUIDs = nil
        case Key.scanResponseServiceData: scanResponseServiceData = nil
        case Key.scanResponseData: scanResponseData = nil
        case Key.discoverable: discoverable = nil
        case Key.discoverableTimeout: discoverableTimeout = nil
        case Key.includes: includes = nil
        case Key.localName: localName = nil
        case Key.appearance: appearance = nil
        case Key.duration: duration = nil
        case Key.timeout: timeout = nil
        case Key.secondaryChannel: secondaryChannel = nil
        case Key.minInterval: minInterval = nil
        case Key.maxInterval: maxInterval = nil
        case Key.txPower: txPower = nil
        case Key.instance: instance = nil
        default: break
        }
    }
}
