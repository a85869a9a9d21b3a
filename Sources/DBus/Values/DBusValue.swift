import Foundation

/// A D-Bus value of any type, as it travels in a message body.
///
/// Byte arrays (`ay`) are always ``bytes(_:)``, never ``array(_:_:)`` of ``byte(_:)``:
/// one spelling per value keeps equality meaningful and the common BLE payload fast.
/// Arrays and dictionaries carry their element types so that empty containers still have a
/// signature.
///
/// Only ``variant(_:)`` is boxed: the other cases hold their payload inline (containers keep
/// their elements in arrays already), so making a value, such as a call's ``bytes(_:)``
/// argument, costs no heap allocation of its own.
public enum DBusValue: Sendable, Hashable {
    /// `y`
    case byte(UInt8)
    /// `b`
    case boolean(Bool)
    /// `n`
    case int16(Int16)
    /// `q`
    case uint16(UInt16)
    /// `i`
    case int32(Int32)
    /// `u`
    case uint32(UInt32)
    /// `x`
    case int64(Int64)
    /// `t`
    case uint64(UInt64)
    /// `d`
    case double(Double)
    /// `s`: must not contain NUL characters.
    case string(String)
    /// `o`
    case objectPath(ObjectPath)
    /// `g`
    case signature(Signature)
    /// `h`: a file descriptor passed with the message.
    case unixFD(FileDescriptor)
    /// `ay`
    case bytes(Data)
    /// `aT` for any element type but `y`: every element must have type `element`.
    case array(DBusType, [DBusValue])
    /// `a{KV}`: entries keep their order; keys must have basic type `key`.
    case dictionary(key: DBusType, value: DBusType, [DBusDictionaryEntry])
    /// `(…)`: one or more fields.
    case structure([DBusValue])
    /// `v`
    indirect case variant(DBusValue)

    /// The type of this value.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .bytes: .array(.byte)
        case .array(let element, _): .array(element)
        case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
        case .structure(let fields): .structure(fields.map(\.type))
        case .variant: .variant
        }
    }

    /// The value inside a variant, or the value itself when it is not one.
    public var unwrappingVariant: DBusValue {
        if case .variant(let inner) = self { return inner.unwrappingVariant }
        return self
    }
}

/// One key–value pair of a ``DBusValue/dictionary(key:value:_:)``.
public struct DBusDictionaryEntry: Sendable, Hashable {
    /// The key, of a basic type.
    public var key: DBusValue
    /// The value.
    public var value: DBusValue

    /// Creates an entry.
    public init(_ key: DBusValue, _ value: DBusValue) {
        self.key = key
        self.value = value
    }
}

extension DBusValue {
    /// The most containers (arrays, dictionary entries, structures, variants) a message body
    /// may nest; the bus drops a connection that sends a message nested deeper.
    static let maximumNestingDepth = 64
    /// The longest array in bytes (`DBUS_MAXIMUM_ARRAY_LENGTH`); libdbus aborts on a longer one.
    static let maximumArrayBytes = 67_108_864

    /// Checks that the value can be marshalled: element and key types agree with the
    /// declared ones, keys are basic, strings hold no NUL, structures are not empty, file
    /// descriptors are open, and the D-Bus limits hold (signatures of at most 255 bytes, 32
    /// nested arrays and 32 nested structures, 64 nested containers in all, 64 MiB per byte array).
    public func validate() throws(DBusError) {
        try validate(nestedIn: 0)
    }

    /// ``validate()`` for a value that will travel inside `depth` containers (a property value
    /// in `PropertiesChanged` sits in three: the array, its entry and the variant).
    func validate(nestedIn depth: Int) throws(DBusError) {
        try Self.validateSignature(of: self)
        try validate(depth: depth)
    }

    /// `depth` counts the containers around this value, as the bus's validator does.
    private func validate(depth: Int) throws(DBusError) {
        switch self {
        case .string(let string):
            if string.utf8.contains(0) {
                throw DBusError(.invalidValue, message: "strings cannot contain NUL characters")
            }
        case .unixFD(let descriptor):
            let number = descriptor.rawValue
            if number < 0 { throw DBusError(.invalidValue, message: "file descriptor already closed") }
            if fcntl(number, F_GETFD) < 0 {
                throw DBusError(.invalidValue, message: "file descriptor \(number) is not open")
            }
        case .bytes(let data):
            try Self.checkNesting(depth + 1)
            if data.count > Self.maximumArrayBytes {
                throw DBusError(
                    .limitExceeded,
                    message: "a byte array holds \(data.count) bytes, more than the D-Bus maximum of "
                        + "\(Self.maximumArrayBytes)")
            }
        case .array(let element, let elements):
            if element == .byte {
                throw DBusError(.invalidValue, message: "byte arrays are DBusValue.bytes, not .array(.byte, …)")
            }
            try Self.validateType(element)
            try Self.checkNesting(depth + 1)
            for value in elements {
                guard value.hasType(element) else {
                    throw DBusError(
                        .invalidValue,
                        message: "array of \(element.signature) holds a value of type \(value.type.signature)")
                }
                try value.validate(depth: depth + 1)
            }
        case .dictionary(let key, let valueType, let entries):
            guard key.isBasic else {
                throw DBusError(.invalidValue, message: "dictionary key type \(key.signature) is not basic")
            }
            try Self.validateType(valueType)
            // The array and its entries are a container each.
            try Self.checkNesting(depth + 2)
            for entry in entries {
                guard entry.key.hasType(key), entry.value.hasType(valueType) else {
                    throw DBusError(
                        .invalidValue,
                        message: "dictionary a{\(key.signature)\(valueType.signature)} holds an entry of types "
                            + "\(entry.key.type.signature), \(entry.value.type.signature)")
                }
                try entry.key.validate(depth: depth + 2)
                try entry.value.validate(depth: depth + 2)
            }
        case .structure(let fields):
            if fields.isEmpty { throw DBusError(.invalidValue, message: "structures need at least one field") }
            try Self.checkNesting(depth + 1)
            for field in fields { try field.validate(depth: depth + 1) }
        case .variant(let inner):
            try Self.checkNesting(depth + 1)
            // A variant carries its content's signature, which must be valid on its own.
            try Self.validateSignature(of: inner)
            try inner.validate(depth: depth + 1)
        default:
            break
        }
    }

    /// Values whose signature could break a signature rule are checked by spelling it out;
    /// basic values and byte arrays cannot.
    private static func validateSignature(of value: DBusValue) throws(DBusError) {
        switch value {
        case .array, .dictionary, .structure:
            // Every signal and reply has one of these: most are plainly fine, and parsing the
            // spelt-out signature is then work for nothing.
            var codes = 0
            if value.plainlyFitsSignatureRules(codes: &codes), codes <= Self.plainSignatureLimit { return }
            do {
                _ = try Signature(types: [value.type])
            } catch {
                throw DBusError(.invalidValue, message: "the value cannot be sent: \(error.message)")
            }
        default:
            break
        }
    }

    /// Signatures up to this many codes (far below the 255 allowed) skip the full check.
    static let plainSignatureLimit = 128

    private static func checkNesting(_ depth: Int) throws(DBusError) {
        if depth > maximumNestingDepth {
            throw DBusError(
                .invalidValue,
                message: "the value nests more than \(maximumNestingDepth) containers (variants included)")
        }
    }

    /// Empty containers still need a marshallable element type.
    private static func validateType(_ type: DBusType) throws(DBusError) {
        switch type {
        case .array(let element): try validateType(element)
        case .dictionary(let key, let value):
            guard key.isBasic else {
                throw DBusError(.invalidValue, message: "dictionary key type \(key.signature) is not basic")
            }
            try validateType(value)
        case .structure(let fields):
            if fields.isEmpty { throw DBusError(.invalidValue, message: "structures need at least one field") }
            for field in fields { try validateType(field) }
        default: break
        }
    }
}

extension DBusValue {
    /// ``DBusType/plainlyFitsSignatureRules(codes:arrays:structures:)`` of this value's type,
    /// without building the type (a box per container on every message).
    fileprivate func plainlyFitsSignatureRules(codes: inout Int) -> Bool {
        switch self {
        case .array(let element, _):
            codes += 1
            return element.plainlyFitsSignatureRules(codes: &codes, arrays: 1, structures: 0)
        case .dictionary(let key, let value, _):
            codes += 4
            return key.isBasic && value.plainlyFitsSignatureRules(codes: &codes, arrays: 1, structures: 1)
        case .structure(let fields):
            codes += 2
            guard !fields.isEmpty else { return false }
            return fields.allSatisfy { $0.plainlyFitsAsField(codes: &codes) }
        case .bytes:
            codes += 2
            return true
        default:
            codes += 1
            return true
        }
    }

    /// A field of a top-level structure: one structure level deep.
    private func plainlyFitsAsField(codes: inout Int) -> Bool {
        switch self {
        case .bytes:
            codes += 2
            return true
        case .array, .dictionary, .structure:
            return type.plainlyFitsSignatureRules(codes: &codes, arrays: 0, structures: 1)
        default:
            codes += 1
            return true
        }
    }
}

extension DBusType {
    /// Whether this type is plainly within the signature rules: shallow (at most 8 nested
    /// arrays and 8 nested structures or dictionary entries, the limits being 32), non-empty
    /// structures, basic dictionary keys. Counts its codes into `codes`; a type this says no
    /// to is not necessarily invalid, only left to the full check.
    fileprivate func plainlyFitsSignatureRules(codes: inout Int, arrays: Int, structures: Int) -> Bool {
        switch self {
        case .array(let element):
            codes += 1
            return arrays < 8
                && element.plainlyFitsSignatureRules(codes: &codes, arrays: arrays + 1, structures: structures)
        case .dictionary(let key, let value):
            codes += 3
            guard arrays < 8, structures < 8, key.isBasic else { return false }
            codes += 1
            return value.plainlyFitsSignatureRules(codes: &codes, arrays: arrays + 1, structures: structures + 1)
        case .structure(let fields):
            codes += 2
            guard !fields.isEmpty, structures < 8 else { return false }
            return fields.allSatisfy {
                $0.plainlyFitsSignatureRules(codes: &codes, arrays: arrays, structures: structures + 1)
            }
        default:
            codes += 1
            return true
        }
    }
}
