import BlueZ
import Foundation

/// The `or_patterns` of a passive scan's advertisement monitor: BlueZ matches AD structures
/// byte for byte at a position, so a service is looked for where advertisements carry it.
enum PassiveScanPatterns {
    /// 16-bit UUIDs are looked for at the first `listedShortPositions` places of a UUID list
    /// (advertisements list a few; each place is one pattern per AD type).
    static let listedShortPositions = 4

    /// Patterns that match an advertisement listing one of `services` (complete or incomplete
    /// list, 16- or 128-bit) or carrying service data for it.
    static func patterns(for services: [BluetoothUUID]) -> [MonitorPattern] {
        var patterns: [MonitorPattern] = []
        for service in services {
            guard let bytes = BlueZUUID.advertisedBytes(service.uuidString) else { continue }
            let content = Data(bytes)
            if bytes.count == 2 {
                // Incomplete (0x02) and complete (0x03) lists of 16-bit UUIDs; service data (0x16).
                for position in 0..<listedShortPositions {
                    for type: UInt8 in [0x02, 0x03] {
                        patterns.append(MonitorPattern(start: UInt8(position * 2), adType: type, content: content))
                    }
                }
                patterns.append(MonitorPattern(start: 0, adType: 0x16, content: content))
            } else {
                // A 128-bit UUID fills a legacy advertisement's list: it is the first (0x06, 0x07);
                // service data (0x21).
                for type: UInt8 in [0x06, 0x07, 0x21] {
                    patterns.append(MonitorPattern(start: 0, adType: type, content: content))
                }
            }
        }
        return patterns
    }
}
