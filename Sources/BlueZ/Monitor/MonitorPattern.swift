import DBus
import Foundation

/// One pattern of an `or_patterns` advertisement monitor, `(y start, y AD type, ay content)`:
/// it matches an advertisement with an AD structure of that type whose data holds `content`
/// at byte `start`.
public struct MonitorPattern: Sendable, Hashable {
    /// Where in the AD structure's data the content starts.
    public var start: UInt8
    /// The AD type (assigned numbers: 0x03 the complete list of 16-bit UUIDs, 0xFF
    /// manufacturer data, …).
    public var adType: UInt8
    /// The bytes to find.
    public var content: Data

    /// The longest AD data of a legacy advertisement, which bluetoothd measures patterns by.
    public static let maximumDataLength = 31

    /// Creates a pattern.
    public init(start: UInt8, adType: UInt8, content: Data) {
        self.start = start
        self.adType = adType
        self.content = content
    }

    /// `(yyay)`
    public var dbusValue: DBusValue { .structure([.byte(start), .byte(adType), .bytes(content)]) }

    /// The D-Bus type of `Patterns`, `a(yyay)`.
    public static let arrayType = DBusType.array(.structure([.byte, .byte, .array(.byte)]))

    /// Decodes a `(yyay)`; other shapes are a `typeMismatch`.
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .structure(let fields) = dbusValue, fields.count == 3, case .byte(let start) = fields[0],
            case .byte(let type) = fields[1]
        else { throw DBusError(.typeMismatch, message: "a monitor pattern is (yyay)") }
        switch fields[2] {
        case .bytes(let content): self.init(start: start, adType: type, content: content)
        case .array(.byte, let bytes):
            var content = Data()
            for case .byte(let byte) in bytes { content.append(byte) }
            guard content.count == bytes.count else {
                throw DBusError(.typeMismatch, message: "a monitor pattern's content is ay")
            }
            self.init(start: start, adType: type, content: content)
        default: throw DBusError(.typeMismatch, message: "a monitor pattern's content is ay")
        }
    }

    /// Why bluetoothd refuses the pattern (src/adv_monitor.c, `parse_patterns`), nil when it
    /// takes it: content of 1 to 31 bytes that ends within 31, an AD type from Flags (0x01) to
    /// 3D Information (0x3D) or Manufacturer Specific Data (0xFF).
    public var refusal: String? {
        if content.isEmpty || content.count > Self.maximumDataLength { return "content of \(content.count) bytes" }
        if Int(start) > Self.maximumDataLength - content.count { return "content past byte 31 (start \(start))" }
        if !((0x01...0x3D).contains(adType) || adType == 0xFF) { return "AD type 0x\(String(adType, radix: 16))" }
        return nil
    }

    /// Whether an AD structure of `type` with `data` matches.
    public func matches(type: UInt8, data: Data) -> Bool {
        guard type == adType, Int(start) + content.count <= data.count else { return false }
        let from = data.index(data.startIndex, offsetBy: Int(start))
        return data[from..<data.index(from, offsetBy: content.count)].elementsEqual(content)
    }
}
