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
        let decoding = PropertyDecoding(interface: BlueZInterface.device1)
        var address: BluetoothAddress?
        var uuids: [String]?
        // One pass over the properties, each name told by its length first: eleven look-ups
        // hashed eleven names for every advertisement a scan saw, and most of a device's
        // properties are none of these (a length is read without touching the text).
        for (key, value) in properties {
            switch key.utf8.count {
            case 4:
                if key == Key.rssi {
                    rssi = try decoding.decode(key, value)
                } else if key == Key.name {
                    name = try decoding.decode(key, value)
                }
            case 5:
                if key == Key.uuids { uuids = try decoding.decodeStrings(key, value) }
            case 7:
                if key == Key.address {
                    address = try decoding.decode(key, value)
                } else if key == Key.txPower {
                    txPower = try decoding.decode(key, value)
                }
            case 10:
                if key == Key.appearance { appearance = try decoding.decode(key, value) }
            case 11:
                if key == Key.addressType {
                    addressType = try decoding.decode(key, value)
                } else if key == Key.serviceData {
                    serviceData = try decoding.decodeByteMap(key, value)
                }
            case 15:
                if key == Key.advertisingData { advertisingData = try decoding.decodeByteMap(key, value) }
            case 16:
                if key == Key.manufacturerData {
                    manufacturerData = try decoding.decodeByteMap(key, value)
                } else if key == Key.advertisingFlags {
                    advertisingFlags = try decoding.decode(key, value)
                }
            default:
                continue
            }
        }
        guard let address else { throw decoding.missing(Key.address) }
        guard let uuids else { throw decoding.missing(Key.uuids) }
        self.address = address
        self.uuids = uuids
    }
}
