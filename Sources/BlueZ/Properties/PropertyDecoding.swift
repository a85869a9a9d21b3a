import DBus
import Foundation

/// Decodes property values of one interface, turning every failure into a
/// ``DBus/DBusError`` with code `.typeMismatch` that names the interface and the property.
struct PropertyDecoding {
    /// What the errors name before the property: the interface, or `Interface.Property` for the
    /// entries of a dictionary-valued property.
    let context: String

    /// Decodes the properties of `interface`.
    init(interface: InterfaceName) {
        context = interface.rawValue
    }

    /// Decodes entries named after `context`, e.g. `org.bluez.LEAdvertisingManager1.SupportedCapabilities`.
    init(context: String) {
        self.context = context
    }

    /// The value of a property, without the variant a property dictionary wraps it in.
    static func unwrapped(_ value: DBusValue) -> DBusValue {
        if case .variant(let inner) = value { return inner }
        return value
    }

    /// `value` decoded as `T`, whose D-Bus type must match exactly.
    func decode<T: DBusRepresentable>(
        _ key: String, _ value: DBusValue, as type: T.Type = T.self
    ) throws(DBusError) -> T {
        let inner = Self.unwrapped(value)
        guard T.hasType(inner) else { throw mismatch(key, expected: T.dbusType, got: inner) }
        do {
            return try T(dbusValue: inner)
        } catch {
            throw DBusError(.typeMismatch, message: "\(context).\(key): \(error.message)")
        }
    }

    /// An array of strings (`as`, such as `UUIDs`), read as such: the generic ``decode(_:_:as:)``
    /// builds the array's D-Bus type twice to compare them and decodes through the array's
    /// unspecialised conformance, for every advertisement a scan sees.
    func decodeStrings(_ key: String, _ value: DBusValue) throws(DBusError) -> [String] {
        let inner = Self.unwrapped(value)
        guard case .array(.string, let elements) = inner else {
            throw mismatch(key, expected: .array(.string), got: inner)
        }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for element in elements {
            guard case .string(let string) = element else { throw mismatch(key, expected: .array(.string), got: inner) }
            strings.append(string)
        }
        return strings
    }

    /// A dictionary `a{Kv}` whose variants all hold `ay`, such as `ManufacturerData` (`a{qv}`),
    /// `ServiceData` (`a{sv}`) and `AdvertisingData` (`a{yv}`). A repeated key keeps its last value.
    func decodeByteMap<K: DBusRepresentable & Hashable>(
        _ key: String, _ value: DBusValue, keyType: K.Type = K.self
    ) throws(DBusError) -> [K: Data] {
        let inner = Self.unwrapped(value)
        guard case .dictionary(let keyType, .variant, let entries) = inner, keyType == K.dbusType else {
            throw mismatch(key, expected: .dictionary(key: K.dbusType, value: .variant), got: inner)
        }
        var out = [K: Data](room: entries.count)
        for entry in entries {
            guard case .variant(let held) = entry.value, case .bytes(let bytes) = held else {
                let held = Self.unwrapped(entry.value).type.signature
                throw DBusError(.typeMismatch, message: "\(context).\(key): expected ay in each variant, got \(held)")
            }
            do throws(DBusError) {
                out[try K(dbusValue: entry.key)] = bytes
            } catch {
                throw DBusError(.typeMismatch, message: "\(context).\(key): \(error.message)")
            }
        }
        return out
    }

    /// A dictionary `a{sv}` as `[String: DBusValue]` with the variants unwrapped.
    func decodeVariantDictionary(_ key: String, _ value: DBusValue) throws(DBusError) -> [String: DBusValue] {
        let inner = Self.unwrapped(value)
        let expected = { DBusType.dictionary(key: .string, value: .variant) }
        guard case .dictionary(.string, .variant, let entries) = inner else {
            throw mismatch(key, expected: expected(), got: inner)
        }
        var out: [String: DBusValue] = [:]
        for entry in entries {
            guard case .string(let name) = entry.key else { throw mismatch(key, expected: expected(), got: inner) }
            out[name] = Self.unwrapped(entry.value)
        }
        return out
    }

    /// The error for a value of the wrong type.
    func mismatch(_ key: String, expected: DBusType, got value: DBusValue) -> DBusError {
        DBusError(
            .typeMismatch, message: "\(context).\(key): expected \(expected.signature), got \(value.type.signature)")
    }

    /// The error for a required property that is absent.
    func missing(_ key: String) -> DBusError {
        DBusError(.typeMismatch, message: "\(context).\(key): required property is missing")
    }
}

/// Reads the properties of one object from its dictionary, with ``PropertyDecoding``.
struct PropertyReader {
    /// The decoder, which knows the interface.
    let decoding: PropertyDecoding
    /// The dictionary being read.
    let properties: [String: DBusValue]

    /// A reader for the properties of `interface`.
    init(_ interface: InterfaceName, _ properties: [String: DBusValue]) {
        self.init(PropertyDecoding(interface: interface), properties)
    }

    /// A reader that decodes with `decoding`.
    init(_ decoding: PropertyDecoding, _ properties: [String: DBusValue]) {
        self.decoding = decoding
        self.properties = properties
    }

    /// A property that must be present.
    func required<T: DBusRepresentable>(_ key: String, as type: T.Type = T.self) throws(DBusError) -> T {
        guard let value = properties[key] else { throw decoding.missing(key) }
        return try decoding.decode(key, value, as: type)
    }

    /// A property that may be absent.
    func optional<T: DBusRepresentable>(_ key: String, as type: T.Type = T.self) throws(DBusError) -> T? {
        guard let value = properties[key] else { return nil }
        return try decoding.decode(key, value, as: type)
    }

    /// An optional `a{Kv}` dictionary of byte arrays.
    func optionalByteMap<K: DBusRepresentable & Hashable>(
        _ key: String, keyType: K.Type = K.self
    ) throws(DBusError) -> [K: Data]? {
        guard let value = properties[key] else { return nil }
        return try decoding.decodeByteMap(key, value, keyType: keyType)
    }

    /// An optional `a{sv}` dictionary.
    func optionalVariantDictionary(_ key: String) throws(DBusError) -> [String: DBusValue]? {
        guard let value = properties[key] else { return nil }
        return try decoding.decodeVariantDictionary(key, value)
    }
}

/// Encodes the dictionaries ``PropertyDecoding`` decodes, with entries sorted by key so that
/// equal dictionaries give equal values.
enum PropertyEncoding {
    /// `a{Kv}` with each byte array in a variant.
    static func byteMap<K: DBusRepresentable & Comparable>(_ map: [K: Data]) -> DBusValue {
        .dictionary(
            key: K.dbusType, value: .variant,
            map.sorted { $0.key < $1.key }.map { DBusDictionaryEntry($0.key.dbusValue, .variant(.bytes($0.value))) })
    }

    /// `a{sv}` with each value in a variant.
    static func variantDictionary(_ dictionary: [String: DBusValue]) -> DBusValue {
        .dictionary(
            key: .string, value: .variant,
            dictionary.sorted { $0.key < $1.key }.map { DBusDictionaryEntry(.string($0.key), .variant($0.value)) })
    }
}

/// A property struct that can update one property at a time; ``applyChanges(to:changed:invalidated:)``
/// builds `apply(changed:invalidated:)` from it.
protocol PropertyUpdating {
    /// Sets the property `key` from `value`; unknown keys are ignored.
    mutating func update(_ key: String, _ value: DBusValue) throws(DBusError)
    /// Clears the optional property `key`; required and unknown keys are ignored.
    mutating func invalidate(_ key: String)
}

/// Applies `changed` then `invalidated` to a copy of `properties`, and stores the copy only when
/// every change decoded, so a bad value leaves the properties as they were.
func applyChanges<P: PropertyUpdating>(
    to properties: inout P, changed: [String: DBusValue], invalidated: [String]
) throws(DBusError) {
    var copy = properties
    for (key, value) in changed { try copy.update(key, value) }
    for key in invalidated { copy.invalidate(key) }
    properties = copy
}

extension Array where Element: DBusRepresentable {
    /// `aT` holding these elements.
    ///
    /// Used instead of `DBus`'s `Array.dbusValue`, which encodes every *empty* array as `ay`
    /// (an empty `[String]` passes its `as? [UInt8]` test), the wrong type for `UUIDs: []`.
    var arrayValue: DBusValue { .array(Element.dbusType, map(\.dbusValue)) }
}
