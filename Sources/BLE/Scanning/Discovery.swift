import BlueZ
import Foundation

/// One advertising peripheral seen by a scan.
public struct Discovery: Sendable, Hashable {
    /// Who it is.
    public var id: PeripheralID
    /// Its advertised (or cached) name.
    public var name: String? { advertisement.localName }
    /// Received signal strength, dBm.
    public var rssi: Int16
    /// What it advertised.
    public var advertisement: AdvertisementData
    /// When it was reported.
    public var timestamp: Date
}

/// The advertising data of a peripheral as BlueZ reports it.
///
/// A value type whose fields live in one immutable, shared storage: a scan copies an
/// advertisement several times per report (what it last reported, the discovery, the
/// consumer's buffer), and copying five collections retained each of them every time. A
/// setter gives the advertisement storage of its own.
public struct AdvertisementData: Sendable, Hashable {
    /// The local name.
    public var localName: String? {
        get { self[\.localName] }
        set { self[\.localName] = newValue }
    }
    /// Advertised service UUIDs (and service-data UUIDs, which BlueZ lists with them).
    public var serviceUUIDs: [BluetoothUUID] {
        get { self[\.serviceUUIDs] }
        set { self[\.serviceUUIDs] = newValue }
    }
    /// Manufacturer-specific data by company identifier.
    public var manufacturerData: [UInt16: Data] {
        get { self[\.manufacturerData] }
        set { self[\.manufacturerData] = newValue }
    }
    /// Service data by service UUID.
    public var serviceData: [BluetoothUUID: Data] {
        get { self[\.serviceData] }
        set { self[\.serviceData] = newValue }
    }
    /// Advertised TX power, dBm.
    public var txPower: Int16? {
        get { self[\.txPower] }
        set { self[\.txPower] = newValue }
    }
    /// Whether it accepts connections: BlueZ does not report the advertising PDU type, so
    /// this is `nil` (unknown) on every release up to 5.87.
    public var isConnectable: Bool? {
        get { self[\.isConnectable] }
        set { self[\.isConnectable] = newValue }
    }
    /// The GAP appearance value.
    public var appearance: UInt16? {
        get { self[\.appearance] }
        set { self[\.appearance] = newValue }
    }
    /// The AD Flags (discoverable modes, BR/EDR support: Core Specification Supplement 1.3),
    /// `nil` when BlueZ does not report them (before 5.78, or a device known only from storage).
    public var flags: UInt8? {
        get { self[\.flags] }
        set { self[\.flags] = newValue }
    }
    /// The AD structures BlueZ passes on undecoded, by AD type (Transport Discovery Data,
    /// Broadcast Name, Resolvable Set Identifier, URI, …): every type but those the fields above
    /// hold, and a few BlueZ withholds (addresses, SSP and SMP values, mesh). Empty when the
    /// daemon does not report them (before 5.78, where `AdvertisingData` is experimental).
    public var raw: [UInt8: Data] {
        get { self[\.raw] }
        set { self[\.raw] = newValue }
    }

    private var storage: Storage

    init(_ device: DeviceAdvertisement) {
        var services: [BluetoothUUID: Data] = [:]
        for (key, value) in device.serviceData ?? [:] { services[BluetoothUUID(key)] = value }
        storage = Storage(
            Fields(
                localName: device.name, serviceUUIDs: device.uuids.map { BluetoothUUID($0) },
                manufacturerData: device.manufacturerData ?? [:], serviceData: services, txPower: device.txPower,
                isConnectable: nil, appearance: device.appearance, flags: device.advertisingFlags?.first,
                raw: device.advertisingData ?? [:]))
    }

    /// Equal when every field is; sharing storage, without reading it (a scan compares an
    /// advertisement with what it last reported of the device).
    public static func == (lhs: AdvertisementData, rhs: AdvertisementData) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(storage.fields) }

    /// One field, read from the shared storage; set in storage of this advertisement's own.
    private subscript<Value>(field: WritableKeyPath<Fields, Value>) -> Value {
        get { storage.fields[keyPath: field] }
        set {
            var fields = storage.fields
            fields[keyPath: field] = newValue
            storage = Storage(fields)
        }
    }

    private final class Storage: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private struct Fields: Sendable, Hashable {
        var localName: String?
        var serviceUUIDs: [BluetoothUUID]
        var manufacturerData: [UInt16: Data]
        var serviceData: [BluetoothUUID: Data]
        var txPower: Int16?
        var isConnectable: Bool?
        var appearance: UInt16?
        var flags: UInt8?
        var raw: [UInt8: Data]
    }
}
