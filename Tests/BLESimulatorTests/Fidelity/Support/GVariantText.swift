import DBus
import Foundation

/// Renders D-Bus values in the GVariant text format that `gdbus monitor` prints, so expected
/// traces read like the reference's (bluez-dbus-api.md §12, §13) and still pin every type:
/// `('org.bluez.Device1', {'RSSI': <int16 -60>}, @as [])`.
///
/// Types that GVariant would not infer are annotated on every value (`int16 -60`,
/// `uint16 247`, `byte 0x0c`, `objectpath '/org/bluez'`); byte arrays print as
/// `[byte 0x01, 0x02]`; empty containers carry their type (`@as []`, `@a{sv} {}`).
enum GVariantText {
    /// A message body as a tuple: `()`, `(x,)` or `(x, y)`.
    static func tuple(_ values: [DBusValue]) -> String {
        switch values.count {
        case 0: "()"
        case 1: "(\(render(values[0])),)"
        default: "(" + values.map(render).joined(separator: ", ") + ")"
        }
    }

    /// One value.
    static func render(_ value: DBusValue) -> String {
        switch value {
        case .byte(let byte): "byte " + hex(byte)
        case .boolean(let flag): flag ? "true" : "false"
        case .int16(let number): "int16 \(number)"
        case .uint16(let number): "uint16 \(number)"
        case .int32(let number): "\(number)"
        case .uint32(let number): "uint32 \(number)"
        case .int64(let number): "int64 \(number)"
        case .uint64(let number): "uint64 \(number)"
        case .double(let number): "\(number)"
        case .string(let text): quote(text)
        case .objectPath(let path): "objectpath " + quote(path.rawValue)
        case .signature(let signature): "signature " + quote(signature.rawValue)
        case .unixFD: "handle"
        case .bytes(let data): bytes(data)
        case .array(let element, let elements):
            elements.isEmpty
                ? "@a\(element.signature) []" : "[" + elements.map(render).joined(separator: ", ") + "]"
        case .dictionary(let key, let valueType, let entries):
            entries.isEmpty
                ? "@a{\(key.signature)\(valueType.signature)} {}"
                : "{" + entries.map { render($0.key) + ": " + render($0.value) }.joined(separator: ", ") + "}"
        case .structure(let fields): tuple(fields)
        case .variant(let inner): "<" + render(inner) + ">"
        }
    }

    /// `[byte 0x01, 0x02]`, or `@ay []`.
    static func bytes(_ data: Data) -> String {
        guard let first = data.first else { return "@ay []" }
        return "[byte " + ([hex(first)] + data.dropFirst().map(hex)).joined(separator: ", ") + "]"
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16)
        return "0x" + (digits.count < 2 ? "0" + digits : digits)
    }

    private static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
