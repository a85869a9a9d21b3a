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
public struct AdvertisementData: Sendable, Hashable {
    /// The local name.
    public var localName: String?
    /// Advertised service UUIDs (and service-data UUIDs, which BlueZ lists with them).
    public var serviceUUIDs: [BluetoothUUID]
    /// Manufacturer-specific data by company identifier.
    public var manufacturerData: [UInt16: Data]
    /// Service data by service UUID.
    public var serviceData: [BluetoothUUID: Data]
    /// Advertised TX power, dBm.
    public var txPower: Int16?
    /// Whether it accepts connections: BlueZ does not report the advertising PDU type, so
    /// this is `nil` (unknown) on every release up to 5.87.
    public var isConnectable: Bool?
    /// The GAP appearance value.
    public var appearance: UInt16?
    /// The AD Flags (discoverable modes, BR/EDR support: Core Specification Supplement 1.3),
    /// `nil` when BlueZ does not report them (before 5.78, or a device known only from storage).
    public var flags: UInt8?
    /// The AD structures BlueZ passes on undecoded, by AD type (Transport Discovery Data,
    /// Broadcast Name, Resolvable Set Identifier, URI, …): every type but those the fields above
    /// hold, and a few BlueZ withholds (addresses, SSP and SMP values, mesh). Empty when the
    /// daemon does not report them (before 5.78, where `AdvertisingData` is experimental).
    public var raw: [UInt8: Data]

    init(_ device: DeviceAdvertisement) {
        localName = device.name
        serviceUUIDs = device.uuids.map { BluetoothUUID($0) }
        manufacturerData = device.manufacturerData ?? [:]
        var services: [BluetoothUUID: Data] = [:]
        for (key, value) in device.serviceData ?? [:] { services[BluetoothUUID(key)] = value }
        serviceData = services
        txPower = device.txPower
        isConnectable = nil
        appearance = device.appearance
        flags = device.advertisingFlags?.first
        raw = device.advertisingData ?? [:]
    }
}
