import DBus
import Foundation

/// A property value as `ble monitor` prints it: as text for people (`yes`, `-52`, `00 48`,
/// `[180D, 180A]`), and as a JSON value (byte arrays as hex strings, dictionaries as objects
/// with their keys as text).
enum PropertyText {
    static func text(_ value: DBusValue) -> String {
        switch value {
        case .boolean(let flag): flag ? "yes" : "no"
        case .byte(let number): String(number)
        case .int16(let number): String(number)
        case .uint16(let number): String(number)
        case .int32(let number): String(number)
        case .uint32(let number): String(number)
        case .int64(let number): String(number)
        case .uint64(let number): String(number)
        case .double(let number): String(number)
        case .string(let text): text
        case .objectPath(let path): path.rawValue
        case .signature(let signature): signature.rawValue
        case .unixFD(let descriptor): "fd \(descriptor.rawValue)"
        case .bytes(let data): ValueFormat.hex(data)
        case .array(_, let elements): "[" + elements.map(text).joined(separator: ", ") + "]"
        case .dictionary(_, _, let entries):
            "{" + entries.map { "\(text($0.key)): \(text($0.value))" }.joined(separator: ", ") + "}"
        case .structure(let fields): "(" + fields.map(text).joined(separator: ", ") + ")"
        case .variant(let inner): text(inner)
        }
    }

    static func json(_ value: DBusValue) -> JSONValue {
        switch value {
        case .boolean(let flag): .bool(flag)
        case .byte(let number): .integer(Int64(number))
        case .int16(let number): .integer(Int64(number))
        case .uint16(let number): .integer(Int64(number))
        case .int32(let number): .integer(Int64(number))
        case .uint32(let number): .integer(Int64(number))
        case .int64(let number): .integer(number)
        case .uint64(let number): number <= UInt64(Int64.max) ? .integer(Int64(number)) : .string(String(number))
        case .double(let number): .double(number)
        case .string(let text): .string(text)
        case .objectPath(let path): .string(path.rawValue)
        case .signature(let signature): .string(signature.rawValue)
        case .unixFD(let descriptor): .integer(Int64(descriptor.rawValue))
        case .bytes(let data): .string(ValueFormat.hex(data).replacingOccurrences(of: " ", with: ""))
        case .array(_, let elements): .array(elements.map(json))
        case .dictionary(_, _, let entries):
            .object(Dictionary(entries.map { (text($0.key), json($0.value)) }, uniquingKeysWith: { _, last in last }))
        case .structure(let fields): .array(fields.map(json))
        case .variant(let inner): json(inner)
        }
    }
}

/// A JSON value, for records whose fields are not known in advance.
indirect enum JSONValue: Encodable, Equatable {
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
