import DBus
import Foundation

/// Reads fuzz bytes as a recipe for D-Bus values, so the fuzzer's mutations become property
/// dictionaries of every shape: wrong types, huge and empty values, odd strings, deep nesting.
struct FuzzRecipe {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isExhausted: Bool { index >= bytes.count }

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, index + count)
        defer { index = end }
        return Array(bytes[index..<end])
    }

    mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T {
        take(MemoryLayout<T>.size).reduce(T.zero) { ($0 << 8) | T(truncatingIfNeeded: $1) }
    }

    /// A string of up to 255 bytes; invalid UTF-8 is repaired, as the D-Bus layer would never
    /// pass it on (libdbus rejects it on the wire).
    mutating func string() -> String { String(decoding: take(Int(byte())), as: UTF8.self) }

    /// A property name: mostly one BlueZ uses, sometimes anything.
    mutating func propertyName() -> String {
        let pick = Int(byte())
        return pick < Self.names.count ? Self.names[pick] : string()
    }

    /// A value of any type, nested up to `depth` containers deep.
    mutating func value(depth: Int = 3) -> DBusValue {
        let kind = byte() % (depth > 0 ? 16 : 12)
        switch kind {
        case 0: return .byte(byte())
        case 1: return .boolean(byte() & 1 == 1)
        case 2: return .int16(integer(Int16.self))
        case 3: return .uint16(integer(UInt16.self))
        case 4: return .int32(integer(Int32.self))
        case 5: return .uint32(integer(UInt32.self))
        case 6: return .int64(integer(Int64.self))
        case 7: return .double(Double(bitPattern: integer(UInt64.self)))
        case 8: return .string(string())
        case 9: return .objectPath((try? ObjectPath(string())) ?? .root)
        case 10: return .bytes(Data(take(Int(integer(UInt16.self)))))
        case 11: return .uint64(integer(UInt64.self))
        case 12: return .array(.string, (0..<Int(byte() % 8)).map { _ in .string(string()) })
        case 13: return .dictionary(key: .string, value: .variant, dictionary(depth: depth - 1))
        case 14: return .variant(value(depth: depth - 1))
        default:
            let uuids = (0..<Int(byte() % 4)).map { _ in
                DBusDictionaryEntry(.string(string()), .variant(value(depth: 0)))
            }
            return .dictionary(key: .string, value: .variant, uuids)
        }
    }

    /// Up to 31 `{sv}` entries.
    mutating func dictionary(depth: Int = 3) -> [DBusDictionaryEntry] {
        (0..<Int(byte() % 32)).map { _ in DBusDictionaryEntry(.string(propertyName()), .variant(value(depth: depth))) }
    }

    /// A property dictionary as BlueZ's object tree keeps it.
    mutating func properties() -> [String: DBusValue] {
        var properties: [String: DBusValue] = [:]
        for _ in 0..<Int(byte() % 32) { properties[propertyName()] = value() }
        return properties
    }

    static let names = [
        "ActiveInstances", "Adapter", "Address", "AddressType", "AdvertisingData", "AdvertisingFlags", "Alias",
        "Appearance", "Blocked", "Bonded", "Characteristic", "Class", "Connected", "Device", "Discoverable",
        "DiscoverableTimeout", "Discovering", "ExperimentalFeatures", "Flags", "Handle", "Icon", "Includes",
        "LegacyPairing", "LocalName", "MTU", "Manufacturer", "ManufacturerData", "Modalias", "Name", "NotifyAcquired",
        "Notifying", "Pairable", "PairableTimeout", "Paired", "Percentage", "PowerState", "Powered", "Primary", "RSSI",
        "Roles", "Service", "ServiceData", "ServiceUUIDs", "ServicesResolved", "Source", "SupportedCapabilities",
        "SupportedFeatures", "SupportedIncludes", "SupportedInstances", "SupportedSecondaryChannels", "Trusted",
        "TxPower", "Type", "UUID", "UUIDs", "Value", "Version", "WakeAllowed", "WriteAcquired", "Data", "Timeout",
        "Duration", "MinInterval", "MaxInterval", "SecondaryChannel", "SolicitUUIDs", "Includes", "Instance",
    ]
}
