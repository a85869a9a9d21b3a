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
        get { storage.fields.localName }
        set { update { $0.localName = newValue } }
    }
    /// Advertised service UUIDs (and service-data UUIDs, which BlueZ lists with them).
    public var serviceUUIDs: [BluetoothUUID] {
        get { storage.fields.serviceUUIDs }
        set { update { $0.serviceUUIDs = newValue } }
    }
    /// Manufacturer-specific data by company identifier.
    public var manufacturerData: [UInt16: Data] {
        get { storage.fields.manufacturerData }
        set { update { $0.manufacturerData = newValue } }
    }
    /// Service data by service UUID.
    public var serviceData: [BluetoothUUID: Data] {
        get { storage.fields.serviceData }
        set { update { $0.serviceData = newValue } }
    }
    /// Advertised TX power, dBm.
    public var txPower: Int16? {
        get { storage.fields.txPower }
        set { update { $0.txPower = newValue } }
    }
    /// Whether it accepts connections: BlueZ does not report the advertising PDU type, so
    /// this is `nil` (unknown) on every release up to 5.87.
    public var isConnectable: Bool? {
        get { storage.fields.isConnectable }
        set { update { $0.isConnectable = newValue } }
    }
    /// The GAP appearance value.
    public var appearance: UInt16? {
        get { storage.fields.appearance }
        set { update { $0.appearance = newValue } }
    }
    /// The AD Flags (discoverable modes, BR/EDR support: Core Specification Supplement 1.3),
    /// `nil` when BlueZ does not report them (before 5.78, or a device known only from storage).
    public var flags: UInt8? {
        get { storage.fields.flags }
        set { update { $0.flags = newValue } }
    }
    /// The AD structures BlueZ passes on undecoded, by AD type (Transport Discovery Data,
    /// Broadcast Name, Resolvable Set Identifier, URI, …): every type but those the fields above
    /// hold, and a few BlueZ withholds (addresses, SSP and SMP values, mesh). Empty when the
    /// daemon does not report them (before 5.78, where `AdvertisingData` is experimental).
    public var raw: [UInt8: Data] {
        get { storage.fields.raw }
        set { update { $0.raw = newValue } }
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

    private mutating func update(_ change: (inout Fields) -> Void) {
        var fields = storage.fields
        change(&fields)
        storage = Storage(fields)
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
