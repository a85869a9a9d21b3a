import BlueZ
import DBus
import Foundation

/// An advertisement registered with `LEAdvertisingManager1.RegisterAdvertisement`, as
/// bluetoothd last parsed it (live updates included): a snapshot taken by
/// ``Simulator/advertisements``.
public struct RegisteredAdvertisement: Sendable, Hashable {
    /// The adapter index (`hciN`) it was registered on.
    public var adapter: Int
    /// The unique bus name of the application's connection.
    public var owner: BusName
    /// The advertisement object's path.
    public var path: ObjectPath
    /// The advertising instance bluetoothd gave it (1…5).
    public var instance: UInt8
    /// Every property read from the object.
    public var properties: LEAdvertisementProperties

    /// `Type`: `broadcast` or `peripheral`.
    public var type: AdvertisementType { properties.type }
    /// `LocalName`.
    public var localName: String? { properties.localName }
    /// `ServiceUUIDs`, as the application wrote them.
    public var serviceUUIDs: [String] { properties.serviceUUIDs ?? [] }
    /// `SolicitUUIDs`.
    public var solicitUUIDs: [String] { properties.solicitUUIDs ?? [] }
    /// `ManufacturerData`: company identifier → data.
    public var manufacturerData: [UInt16: Data] { properties.manufacturerData ?? [:] }
    /// `ServiceData`: UUID → data.
    public var serviceData: [String: Data] { properties.serviceData ?? [:] }
    /// `Data`: raw AD type → data.
    public var data: [UInt8: Data] { properties.data ?? [:] }
    /// `ScanResponseServiceUUIDs`, where the daemon parses it.
    public var scanResponseServiceUUIDs: [String] { properties.scanResponseServiceUUIDs ?? [] }
    /// `ScanResponseManufacturerData`, where the daemon parses it.
    public var scanResponseManufacturerData: [UInt16: Data] { properties.scanResponseManufacturerData ?? [:] }
    /// `ScanResponseServiceData`, where the daemon parses it.
    public var scanResponseServiceData: [String: Data] { properties.scanResponseServiceData ?? [:] }
    /// `ScanResponseData`, where the daemon parses it.
    public var scanResponseData: [UInt8: Data] { properties.scanResponseData ?? [:] }
    /// `Includes`: `tx-power`, `appearance`, `local-name`.
    public var includes: [String] { properties.includes ?? [] }
    /// `Appearance`.
    public var appearance: UInt16? { properties.appearance }
    /// `TxPower`, dBm.
    public var txPower: Int16? { properties.txPower }
    /// `Discoverable` (false when absent).
    public var discoverable: Bool { properties.discoverable ?? false }
    /// `DiscoverableTimeout`, seconds.
    public var discoverableTimeout: UInt16? { properties.discoverableTimeout }
    /// `Timeout`, seconds: when it expires bluetoothd calls `Release()` and drops the advertisement.
    public var timeout: UInt16? { properties.timeout }
    /// `Duration`, seconds.
    public var duration: UInt16? { properties.duration }
    /// `SecondaryChannel`.
    public var secondaryChannel: String? { properties.secondaryChannel }
    /// `MinInterval`, milliseconds.
    public var minInterval: UInt32? { properties.minInterval }
    /// `MaxInterval`, milliseconds.
    public var maxInterval: UInt32? { properties.maxInterval }
}
