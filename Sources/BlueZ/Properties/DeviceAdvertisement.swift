import DBus
import Foundation

/// What a scan reports of a `Device1`: its address, last RSSI and advertised data, decoded
/// alone from the device's properties.
///
/// A scan looks at every advertisement of every device, and decoding all of ``DeviceProperties``
/// (27 properties, most of them never advertised) for each was a tenth of a scan's client CPU
/// with 10,000 advertisers. The types are checked as ``DeviceProperties`` checks them.
public struct DeviceAdvertisement: Sendable, Hashable {
    /// `Address` `s`.
    public var address: BluetoothAddress
    /// `AddressType` `s`: absent only from a device object that does not follow the API.
    public var addressType: AddressType?
    /// `RSSI` `n`: absent when no advertisement was received in this discovery (Q9).
    public var rssi: Int16?
    /// `Name` `s`, optional.
    public var name: String?
    /// `UUIDs` `as`: the advertised service UUIDs (the resolved ones once connected).
    public var uuids: [String]
    /// `ManufacturerData` `a{qv}`, optional.
    public var manufacturerData: [UInt16: Data]?
    /// `ServiceData` `a{sv}`, optional.
    public var serviceData: [String: Data]?
    /// `TxPower` `n`, optional.
    public var txPower: Int16?
    /// `Appearance` `q`, optional.
    public var appearance: UInt16?
    /// `AdvertisingFlags` `ay`: the AD Flags, absent before BlueZ 5.78 (experimental there).
    public var advertisingFlags: Data?
    /// `AdvertisingData` `a{yv}`: the AD structures BlueZ does not decode itself, by AD type;
    /// absent before 5.78 (experimental there).
    public var advertisingData: [UInt8: Data]?

    /// Decodes the advertised properties from a device's `Device1` properties (values as the
    /// object tree holds them, or still in their variants).
    ///
    /// - Throws: ``DBus/DBusError`` with code `.typeMismatch` when one of them has another
    ///   type than `Device1` gives it, or `Address` or `UUIDs` is missing.
    public init(properties: [String: DBusValue]) throws(DBusError) {
        typealias Key = DeviceProperties.Key
        let reader = PropertyReader(BlueZInterface.device1, properties)
        address = try reader.required(Key.address)
        addressType = try reader.optional(Key.addressType)
        rssi = try reader.optional(Key.rssi)
        name = try reader.optional(Key.name)
        uuids = try reader.required(Key.uuids)
        manufacturerData = try reader.optionalByteMap(Key.manufacturerData)
        serviceData = try reader.optionalByteMap(Key.serviceData)
        txPower = try reader.optional(Key.txPower)
        appearance = try reader.optional(Key.appearance)
        advertisingFlags = try reader.optional(Key.advertisingFlags)
        advertisingData = try reader.optionalByteMap(Key.advertisingData)
    }
}
