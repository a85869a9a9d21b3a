import Foundation

/// A Swift type with a fixed D-Bus type, convertible to and from ``DBusValue``.
///
/// Decoding is strict: a value of another D-Bus type throws ``DBusError/Code/typeMismatch``
/// rather than converting, because a silently widened or truncated number from a peer is a bug
/// waiting to happen.
public protocol DBusRepresentable: Sendable {
    /// The D-Bus type every value of this Swift type has.
    static var dbusType: DBusType { get }
    /// Decodes a value; variants are unwrapped first unless `Self` is ``DBusValue``.
    init(dbusValue: DBusValue) throws(DBusError)
    /// The value to send.
    var dbusValue: DBusValue { get }
    /// Whether `value` has exactly this type (``dbusType``), found without building a type.
    static func hasType(_ value: DBusValue) -> Bool
}

extension DBusRepresentable {
    /// Whether `value` has exactly this type: compares ``DBusValue/type`` with ``dbusType``.
    public static func hasType(_ value: DBusValue) -> Bool { value.type == dbusType }
}

extension DBusError {
    static func mismatch(expected: DBusType, got value: DBusValue) -> DBusError {
        DBusError(.typeMismatch, message: "expected \(expected.signature), got \(value.type.signature)")
    }
}

extension UInt8: DBusRepresentable {
    /// `y`
    public static var dbusType: DBusType { .byte }
    /// Decodes a `y`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .byte(let v) = dbusValue.unwrappingVariant else { throw .mismatch(expected: .byte, got: dbusValue) }
        self = v
    }
    /// A `y`.
    public var dbusValue: DBusValue { .byte(self) }
}

extension Bool: DBusRepresentable {
    /// `b`
    public static var dbusType: DBusType { .boolean }
    /// Decodes a `b`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .boolean(let v) = dbusValue.unwrappingVariant else {
            throw .mismatch(expected: .boolean, got: dbusValue)
        }
        self = v
    }
    /// A `b`.
    public var dbusValue: DBusValue { .boolean(self) }
}

extension Int16: DBusRepresentable {
    /// `n`
    public static var dbusType: DBusType { .int16 }
    /// Decodes an `n`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int16(let v) = dbusValue.unwrappingVariant else {
            throw .mismatch(expected: .int16, got: dbusValue)
        }
        self = v
    }
    /// An `n`.
    public var dbusValue: DBusValue { .int16(self) }
}

extension UInt16: DBusRepresentable {
    /// `q`
    public static var dbusType: DBusType { .uint16 }
    /// Decodes a `q`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint16(let v) = dbusValue.unwrappingVariant else {
            throw .mismatch(expected: .uint16, got: dbusValue)
        }
        self = v
    }
    /// A `q`.
    public var dbusValue: DBusValue { .uint16(self) }
}

extension Int32: DBusRepresentable {
    /// `i`
    public static var dbusType: DBusType { .int32 }
    /// Decodes an `i`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int32(let v) = dbusValue.unwrappingVariant else {
            throw .mismatch(expected: .int32, got: dbusValue)
        }
        self = v
    }
    /// An `i`.
    public var dbusValue: DBusValue { .int32(self) }
}

extension UInt32: DBusRepresentable {
    /// `u`
    public static var dbusType: DBusType { .uint32 }
    /// Decodes a `u`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint32(let v) = dbusValue.unwrappingVariant else {
            throw .mismatch(expected: .uint32, got: dbusValue)
        }
        self = v
    }
    /// A `u`.
    public var dbusValue: DBusValue { .uint32(self) }
}

extension Int64: DBusRepresentable {
    /// `x`
    public static var dbusType: DBusType { .int64 }
    /// Decodes an `x`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int64(let v) = dbusValue.unwrappingVariant else {
            throw .mismatch(expected: .int64, got: dbusValue)
        }
        self = v
    }
    /// An `x`.
    public var dbusValue: DBusValue { .int64(self) }
}

extension UInt64: DBusRepresentable {
    /// `t`
    public static var dbusType: DBusType { .uint64 }
    /// Decodes a `t`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint64(let v) = dbusValue.unwrappingVariant else {
            throw .mismatch(expected: .uint64, got: dbusValue)
        }
        self = v
    }
    /// A `t`.
    public var dbusValue: DBusValue { .uint64(self) }
}

extension Double: DBusRepresentable {
    /// `d`
    public static var dbusType: DBusType { .double }
    /// Decodes a `d`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .double(let v) = dbusValue.unwrappingVariant else {
            throw .mismatch(expected: .double, got: dbusValue)
        }
        self = v
    }
    /// A `d`.
    public var dbusValue: DBusValue { .double(self) }
}

extension String: DBusRepresentable {
    /// `s`
    public static var dbusType: DBusType { .string }
    /// Decodes an `s`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .string(let v) = dbusValue.unwrappingVariant else {
            throw .mismatch(expected: .string, got: dbusValue)
        }
        self = v
    }
    /// An `s`.
    public var dbusValue: DBusValue { .string(self) }
}

extension ObjectPath: DBusRepresentable {
    /// `o`
    public static var dbusType: DBusType { .objectPath }
    /// Decodes an `o`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .objectPath(let v) = dbusValue.unwrappingVariant else {
            throw .mismatch(expected: .objectPath, got: dbusValue)
        }
        self = v
    }
    /// An `o`.
    public var dbusValue: DBusValue { .objectPath(self) }
}

extension Signature: DBusRepresentable {
    /// `g`
    public static var dbusType: DBusType { .signature }
    /// Decodes a `g`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .signature(let v) = dbusValue.unwrappingVariant else {
            throw .mismatch(expected: .signature, got: dbusValue)
        }
        self = v
    }
    /// A `g`.
    public var dbusValue: DBusValue { .signature(self) }
}

extension FileDescriptor: DBusRepresentable {
    /// `h`
    public static var dbusType: DBusType { .unixFD }
    /// Decodes an `h`; the returned object shares ownership with the value.
    public convenience init(dbusValue: DBusValue) throws(DBusError) {
        guard case .unixFD(let v) = dbusValue.unwrappingVariant else {
            throw .mismatch(expected: .unixFD, got: dbusValue)
        }
        try self.init(duplicating: v.rawValue)
    }
    /// An `h`.
    public var dbusValue: DBusValue { .unixFD(self) }
}

extension Data: DBusRepresentable {
    /// `ay`
    public static var dbusType: DBusType { .array(.byte) }
    /// Decodes an `ay`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .bytes(let v) = dbusValue.unwrappingVariant else {
            throw .mismatch(expected: .array(.byte), got: dbusValue)
        }
        self = v
    }
    /// An `ay`.
    public var dbusValue: DBusValue { .bytes(self) }
    /// Whether `value` is an `ay`.
    public static func hasType(_ value: DBusValue) -> Bool {
        if case .bytes = value { true } else { false }
    }
}

extension DBusValue: DBusRepresentable {
    /// `v`: a `DBusValue` stands for "any value" and travels as a variant.
    public static var dbusType: DBusType { .variant }
    /// Takes the value as it is, unwrapping one variant level.
    public init(dbusValue: DBusValue) throws(DBusError) {
        if case .variant(let inner) = dbusValue { self = inner } else { self = dbusValue }
    }
    /// Wraps the value in a variant.
    public var dbusValue: DBusValue { .variant(self) }
}

extension Array: DBusRepresentable where Element: DBusRepresentable {
    /// `aT`
    public static var dbusType: DBusType { .array(Element.dbusType) }
    /// Decodes an array whose elements decode as `Element`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        switch dbusValue.unwrappingVariant {
        case .array(_, let elements):
            var out: [Element] = []
            out.reserveCapacity(elements.count)
            for element in elements { out.append(try Element(dbusValue: element)) }
            self = out
        case .bytes(let data) where Element.dbusType == .byte:
            var out: [Element] = []
            out.reserveCapacity(data.count)
            for byte in data { out.append(try Element(dbusValue: .byte(byte))) }
            self = out
        default:
            throw .mismatch(expected: Self.dbusType, got: dbusValue)
        }
    }
    /// An array value; `[UInt8]` becomes ``DBusValue/bytes(_:)``.
    public var dbusValue: DBusValue {
        // Checked on the type, not the value: an empty `[String]` also casts to `[UInt8]`.
        if Element.self == UInt8.self, let bytes = self as? [UInt8] { return .bytes(Data(bytes)) }
        return .array(Element.dbusType, map(\.dbusValue))
    }
    /// Whether `value` is an array of `Element`s (compared without building `aT`: a property
    /// check ran for every property decoded, and building the type allocated).
    public static func hasType(_ value: DBusValue) -> Bool {
        switch value {
        case .array(let element, _): element == Element.dbusType
        case .bytes: Element.dbusType == .byte
        default: false
        }
    }
}

extension Dictionary: DBusRepresentable where Key: DBusRepresentable, Value: DBusRepresentable {
    /// `a{KV}`
    public static var dbusType: DBusType { .dictionary(key: Key.dbusType, value: Value.dbusType) }
    /// Decodes a dictionary; a repeated key keeps its last value, as most D-Bus bindings do.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .dictionary(_, _, let entries) = dbusValue.unwrappingVariant else {
            throw .mismatch(expected: Self.dbusType, got: dbusValue)
        }
        var out = [Key: Value](room: entries.count)
        for entry in entries { out[try Key(dbusValue: entry.key)] = try Value(dbusValue: entry.value) }
        self = out
    }
    /// Whether `value` is a dictionary of `Key`s to `Value`s (compared without building `a{KV}`).
    public static func hasType(_ value: DBusValue) -> Bool {
        guard case .dictionary(let key, let valueType, _) = value else { return false }
        return key == Key.dbusType && valueType == Value.dbusType
    }
    /// A dictionary value; entries are emitted in the dictionary's iteration order.
    public var dbusValue: DBusValue {
        .dictionary(
            key: Key.dbusType, value: Value.dbusType,
            map { DBusDictionaryEntry($0.key.dbusValue, $0.value.dbusValue) })
    }
}
