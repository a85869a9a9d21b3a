/// The type of a D-Bus value: one complete type of a ``Signature``.
public indirect enum DBusType: Sendable, Hashable, CustomStringConvertible {
    /// `y`
    case byte
    /// `b`
    case boolean
    /// `n`
    case int16
    /// `q`
    case uint16
    /// `i`
    case int32
    /// `u`
    case uint32
    /// `x`
    case int64
    /// `t`
    case uint64
    /// `d`
    case double
    /// `s`
    case string
    /// `o`
    case objectPath
    /// `g`
    case signature
    /// `h`
    case unixFD
    /// `aT`: an array of one element type.
    case array(DBusType)
    /// `a{KV}`: a dictionary; the key must be a basic type.
    case dictionary(key: DBusType, value: DBusType)
    /// `(T…)`: a structure of one or more fields.
    case structure([DBusType])
    /// `v`: a value carrying its own type.
    case variant

    /// The type a one-byte signature code stands for alone (the basic types and `v`); nil for
    /// container codes and anything else.
    static func single(code: UInt8) -> DBusType? {
        switch code {
        case UInt8(ascii: "y"): .byte
        case UInt8(ascii: "b"): .boolean
        case UInt8(ascii: "n"): .int16
        case UInt8(ascii: "q"): .uint16
        case UInt8(ascii: "i"): .int32
        case UInt8(ascii: "u"): .uint32
        case UInt8(ascii: "x"): .int64
        case UInt8(ascii: "t"): .uint64
        case UInt8(ascii: "d"): .double
        case UInt8(ascii: "s"): .string
        case UInt8(ascii: "o"): .objectPath
        case UInt8(ascii: "g"): .signature
        case UInt8(ascii: "h"): .unixFD
        case UInt8(ascii: "v"): .variant
        default: nil
        }
    }

    /// Basic types can be dictionary keys; containers and variants cannot.
    public var isBasic: Bool {
        switch self {
        case .array, .dictionary, .structure, .variant: false
        default: true
        }
    }

    /// The signature code of this type, e.g. `a{sv}`.
    public var signature: String {
        var out = ""
        appendSignature(to: &out)
        return out
    }

    /// The length of ``signature``, counted without spelling it out.
    var signatureLength: Int {
        switch self {
        case .array(let element): 1 + element.signatureLength
        case .dictionary(let key, let value): 3 + key.signatureLength + value.signatureLength
        case .structure(let fields): fields.reduce(2) { $0 + $1.signatureLength }
        default: 1
        }
    }

    /// A short, human-readable form.
    public var description: String { signature }

    func appendSignature(to out: inout String) {
        switch self {
        case .byte: out.append("y")
        case .boolean: out.append("b")
        case .int16: out.append("n")
        case .uint16: out.append("q")
        case .int32: out.append("i")
        case .uint32: out.append("u")
        case .int64: out.append("x")
        case .uint64: out.append("t")
        case .double: out.append("d")
        case .string: out.append("s")
        case .objectPath: out.append("o")
        case .signature: out.append("g")
        case .unixFD: out.append("h")
        case .variant: out.append("v")
        case .array(let element):
            out.append("a")
            element.appendSignature(to: &out)
        case .dictionary(let key, let value):
            out.append("a{")
            key.appendSignature(to: &out)
            value.appendSignature(to: &out)
            out.append("}")
        case .structure(let fields):
            out.append("(")
            for field in fields { field.appendSignature(to: &out) }
            out.append(")")
        }
    }
}
