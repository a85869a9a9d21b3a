import Foundation

/// How a characteristic value is written on the command line and printed: bytes as hex, text,
/// little-endian integers (Bluetooth's byte order), or base64.
public enum ValueFormat: String, Sendable, CaseIterable {
    /// `0148`, `01 48`, `0x0148` or `01:48`.
    case hex
    /// UTF-8 text.
    case utf8
    /// Unsigned 1-byte integers.
    case uint8
    /// Unsigned 2-byte little-endian integers.
    case uint16
    /// Unsigned 4-byte little-endian integers.
    case uint32
    /// Signed (two's complement) 1-byte integers.
    case int8
    /// Signed 2-byte little-endian integers.
    case int16
    /// Signed 4-byte little-endian integers.
    case int32
    /// Base64 (RFC 4648).
    case base64

    /// The names, for help and errors: `hex, utf8, uint8, …`.
    public static let names = allCases.map(\.rawValue).joined(separator: ", ")

    /// Parses `--format NAME`.
    public init(named name: String) throws(UsageError) {
        guard let format = ValueFormat(rawValue: name.lowercased()) else {
            throw UsageError("unknown format \"\(name)\" (formats: \(Self.names))")
        }
        self = format
    }

    /// Bytes per value for the integer formats.
    var width: Int? {
        switch self {
        case .uint8, .int8: 1
        case .uint16, .int16: 2
        case .uint32, .int32: 4
        default: nil
        }
    }

    var isSigned: Bool { self == .int8 || self == .int16 || self == .int32 }

    /// The bytes `text` stands for in this format. Integers may be several, separated by spaces.
    public func parse(_ text: String) throws(UsageError) -> Data {
        switch self {
        case .hex: return try Self.parseHex(text)
        case .utf8: return Data(text.utf8)
        case .base64:
            guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespaces)) else {
                throw UsageError("\"\(text)\" is not base64")
            }
            return data
        default:
            var data = Data()
            for word in text.split(whereSeparator: { $0 == " " || $0 == "," }) {
                data += try parseInteger(String(word))
            }
            guard !data.isEmpty else { throw UsageError("no \(rawValue) value given") }
            return data
        }
    }

    /// `value` printed in this format. Integer formats print one number per `width` bytes and
    /// fail when the length is not a multiple of it.
    public func format(_ value: Data) throws(UsageError) -> String {
        switch self {
        case .hex: return Self.hex(value)
        case .utf8:
            guard let text = String(data: value, encoding: .utf8) else {
                throw UsageError("the value (\(Self.hex(value))) is not valid UTF-8")
            }
            return text
        case .base64: return value.base64EncodedString()
        default:
            let width = self.width ?? 1
            guard value.count % width == 0, !value.isEmpty else {
                throw UsageError(
                    "the value (\(Self.hex(value)), \(value.count) bytes) is not a whole number of \(rawValue)")
            }
            let bytes = Array(value)
            return stride(from: 0, to: bytes.count, by: width).map { start in
                let raw = (0..<width).reduce(UInt64(0)) { $0 | UInt64(bytes[start + $1]) << (8 * $1) }
                return isSigned ? String(Self.signExtend(raw, width: width)) : String(raw)
            }.joined(separator: " ")
        }
    }

    /// Bytes as lower-case hex pairs separated by spaces: `01 48`.
    public static func hex(_ value: Data) -> String {
        value.map { byte in
            let digits = String(byte, radix: 16)
            return byte < 16 ? "0" + digits : digits
        }.joined(separator: " ")
    }

    private static func parseHex(_ text: String) throws(UsageError) -> Data {
        var digits = text.lowercased()
        for separator in [" ", ":", "-", ","] { digits = digits.replacingOccurrences(of: separator, with: "") }
        if digits.hasPrefix("0x") { digits.removeFirst(2) }
        guard digits.allSatisfy(\.isHexDigit), digits.allSatisfy(\.isASCII) else {
            throw UsageError("\"\(text)\" is not hex (write bytes like 01 48, 0148 or 0x0148)")
        }
        guard digits.count % 2 == 0 else { throw UsageError("\"\(text)\" has an odd number of hex digits") }
        var data = Data()
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            data.append(UInt8(digits[index..<next], radix: 16) ?? 0)
            index = next
        }
        return data
    }

    private func parseInteger(_ word: String) throws(UsageError) -> Data {
        let width = self.width ?? 1
        let bits = UInt64(8 * width)
        let negative = word.hasPrefix("-")
        let magnitudeText = negative ? String(word.dropFirst()) : word
        let parsed =
            magnitudeText.lowercased().hasPrefix("0x")
            ? UInt64(magnitudeText.dropFirst(2), radix: 16) : UInt64(magnitudeText, radix: 10)
        let limit: UInt64 = isSigned ? 1 << (bits - 1) : (bits == 64 ? .max : (1 << bits) - 1)
        guard let magnitude = parsed,
            negative ? (isSigned && magnitude <= limit) : magnitude <= limit - (isSigned ? 1 : 0)
        else {
            throw UsageError("\"\(word)\" does not fit in \(rawValue)")
        }
        let raw = negative ? (~magnitude &+ 1) : magnitude
        return Data((0..<width).map { UInt8(truncatingIfNeeded: raw >> (8 * UInt64($0))) })
    }

    private static func signExtend(_ raw: UInt64, width: Int) -> Int64 {
        let shift = UInt64(64 - 8 * width)
        return Int64(bitPattern: raw << shift) >> shift
    }
}
