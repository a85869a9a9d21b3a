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
        var address: BluetoothAddress?
        var uuids: [String]?
        // One pass over the properties, each name told by its length first: eleven look-ups
        // hashed eleven names for every advertisement a scan saw, and most of a device's
        // properties are none of these (a length is read without touching the text). Each
        // value is matched against its one D-Bus type in place; only a value of another type
        // goes through the generic decoding (``decodedSlowly(_:_:)``), for its error: that
        // decoding, inlined eleven times, was code each advertisement ran with cold caches.
        for (key, stored) in properties {
            let value = PropertyDecoding.unwrapped(stored)
            switch key.utf8.count {
            case 4:
                if key == Key.rssi {
                    if case .int16(let level) = value {
                        rssi = level
                    } else {
                        rssi = try Self.decodedSlowly(key, value)
                    }
                } else if key == Key.name {
                    if case .string(let text) = value { name = text } else { name = try Self.decodedSlowly(key, value) }
                }
            case 5:
                if key == Key.uuids { uuids = try Self.strings(key, value) }
            case 7:
                if key == Key.address {
                    if case .string(let text) = value,
                        let number = BluetoothAddress.parse(text, separator: UInt8(ascii: ":"))
                    {
                        address = BluetoothAddress(rawValue: number)
                    } else {
                        address = try Self.decodedSlowly(key, value)
                    }
                } else if key == Key.txPower {
                    if case .int16(let level) = value {
                        txPower = level
                    } else {
                        txPower = try Self.decodedSlowly(key, value)
                    }
                }
            case 10:
                if key == Key.appearance {
                    if case .uint16(let code) = value {
                        appearance = code
                    } else {
                        appearance = try Self.decodedSlowly(key, value)
                    }
                }
            case 11:
                if key == Key.addressType {
                    if case .string(let text) = value {
                        addressType = AddressType(rawValue: text)
                    } else {
                        addressType = try Self.decodedSlowly(key, value)
                    }
                } else if key == Key.serviceData {
                    serviceData = try Self.byteMap(key, value)
                }
            case 15:
                if key == Key.advertisingData { advertisingData = try Self.byteMap(key, value) }
            case 16:
                if key == Key.manufacturerData {
                    manufacturerData = try Self.byteMap(key, value)
                } else if key == Key.advertisingFlags {
                    if case .bytes(let flags) = value {
                        advertisingFlags = flags
                    } else {
                        advertisingFlags = try Self.decodedSlowly(key, value)
                    }
                }
            default:
                continue
            }
        }
        guard let address else { throw PropertyDecoding(interface: BlueZInterface.device1).missing(Key.address) }
        guard let uuids else { throw PropertyDecoding(interface: BlueZInterface.device1).missing(Key.uuids) }
        self.address = address
        self.uuids = uuids
    }

    /// `value` as the generic decoding reads it: for a value that is not of its property's
    /// type, which that decoding refuses with the error naming the property. Kept out of line,
    /// off the path every advertisement takes.
    @inline(never)
    private static func decodedSlowly<T: DBusRepresentable>(_ key: String, _ value: DBusValue) throws(DBusError) -> T {
        try PropertyDecoding(interface: BlueZInterface.device1).decode(key, value)
    }

    /// `UUIDs`, kept out of line with the other decodings that are not a single match.
    @inline(never)
    private static func strings(_ key: String, _ value: DBusValue) throws(DBusError) -> [String] {
        try PropertyDecoding(interface: BlueZInterface.device1).decodeStrings(key, value)
    }

    /// A dictionary of byte arrays (`ManufacturerData`, `ServiceData`, `AdvertisingData`).
    @inline(never)
    private static func byteMap<K: DBusRepresentable & Hashable>(
        _ key: String, _ value: DBusValue
    ) throws(DBusError) -> [K: Data] {
        try PropertyDecoding(interface: BlueZInterface.device1).decodeByteMap(key, value)
    }
}
