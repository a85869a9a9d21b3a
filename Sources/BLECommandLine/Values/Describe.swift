import BLE
import Foundation

/// How things are named in the tool's output.
enum Describe {
    /// `Heart Rate (180D)`, or the bare UUID when the SIG has no name for it.
    static func uuid(_ uuid: BluetoothUUID) -> String {
        uuid.name.map { "\($0) (\(uuid))" } ?? uuid.description
    }

    /// `Polar Electro (0x006B) 02 c2`: company, then the data.
    static func manufacturer(_ company: UInt16, _ data: Data) -> String {
        let id = companyID(company)
        let named = CompanyNames.names[company].map { "\($0) (\(id))" } ?? id
        return data.isEmpty ? named : "\(named) \(ValueFormat.hex(data))"
    }

    /// `1 peripheral`, `2 subscriptions`: a count with its noun.
    static func count(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

    /// `0x006B`
    static func companyID(_ company: UInt16) -> String {
        let digits = String(company, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// Hex, plus the text in quotes when the bytes are printable UTF-8: `48 69 "Hi"`.
    static func value(_ data: Data) -> String {
        guard !data.isEmpty else { return "(empty)" }
        let hex = ValueFormat.hex(data)
        if let text = String(data: data, encoding: .utf8), text.unicodeScalars.allSatisfy(isPrintable) {
            return "\(hex)  \"\(text)\""
        }
        return hex
    }

    private static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x20 && scalar.value != 0x7F && !(0x80..<0xA0).contains(scalar.value)
    }

    /// A duration as seconds with one decimal: `1.5 s`.
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return String(format: "%.1f s", Double(milliseconds) / 1000)
    }

    /// A duration in milliseconds with one decimal: `12.5 ms`.
    static func milliseconds(_ duration: Duration) -> String {
        let microseconds = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        return String(format: "%.1f ms", Double(microseconds) / 1000)
    }

    /// A wall-clock time with milliseconds, local time: `14:03:07.250`.
    static func time(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        localtime_r(&seconds, &parts)
        let milliseconds = Int((date.timeIntervalSince1970 - Double(seconds)) * 1000)
        return String(format: "%02d:%02d:%02d.%03d", parts.tm_hour, parts.tm_min, parts.tm_sec, max(0, milliseconds))
    }

    /// An ISO 8601 UTC timestamp with milliseconds, for JSON.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
