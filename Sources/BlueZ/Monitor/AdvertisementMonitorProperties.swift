import DBus
import Foundation

/// The properties of `org.bluez.AdvertisementMonitor1`, which an application exports under the
/// root it registers with `AdvertisementMonitorManager1.RegisterMonitor`; bluetoothd reads
/// them and calls `Activate()` on a monitor it takes, `Release()` on one it refuses.
public struct AdvertisementMonitorProperties: Sendable, Hashable {
    /// The property names.
    public enum Key {
        /// `Type` `s`
        public static let type = "Type"
        /// `Patterns` `a(yyay)`
        public static let patterns = "Patterns"
        /// `RSSILowThreshold` `n`
        public static let rssiLowThreshold = "RSSILowThreshold"
        /// `RSSIHighThreshold` `n`
        public static let rssiHighThreshold = "RSSIHighThreshold"
        /// `RSSILowTimeout` `q`
        public static let rssiLowTimeout = "RSSILowTimeout"
        /// `RSSIHighTimeout` `q`
        public static let rssiHighTimeout = "RSSIHighTimeout"
        /// `RSSISamplingPeriod` `q`
        public static let rssiSamplingPeriod = "RSSISamplingPeriod"
    }

    /// The one monitor type BlueZ offers.
    public static let orPatterns = "or_patterns"

    /// `Type`: ``orPatterns``.
    public var type: String
    /// `Patterns`: any one matching reports the advertiser.
    public var patterns: [MonitorPattern]
    /// `RSSILowThreshold`, dBm (-127…20, 127: unset).
    public var rssiLowThreshold: Int16?
    /// `RSSIHighThreshold`, dBm (-127…20, 127: unset).
    public var rssiHighThreshold: Int16?
    /// `RSSILowTimeout`, seconds (1…300, 0: unset).
    public var rssiLowTimeout: UInt16?
    /// `RSSIHighTimeout`, seconds (1…300, 0: unset).
    public var rssiHighTimeout: UInt16?
    /// `RSSISamplingPeriod`: 0 every advertisement, 255 the first only, else in 100 ms groups.
    public var rssiSamplingPeriod: UInt16?

    /// An `or_patterns` monitor of `patterns`.
    public init(patterns: [MonitorPattern], rssiSamplingPeriod: UInt16? = nil) {
        type = Self.orPatterns
        self.patterns = patterns
        self.rssiSamplingPeriod = rssiSamplingPeriod
    }

    /// The properties as exported.
    public var dbusProperties: [String: DBusValue] {
        var out: [String: DBusValue] = [
            Key.type: .string(type),
            Key.patterns: .array(.structure([.byte, .byte, .array(.byte)]), patterns.map(\.dbusValue)),
        ]
        if let rssiLowThreshold { out[Key.rssiLowThreshold] = .int16(rssiLowThreshold) }
        if let rssiHighThreshold { out[Key.rssiHighThreshold] = .int16(rssiHighThreshold) }
        if let rssiLowTimeout { out[Key.rssiLowTimeout] = .uint16(rssiLowTimeout) }
        if let rssiHighTimeout { out[Key.rssiHighTimeout] = .uint16(rssiHighTimeout) }
        if let rssiSamplingPeriod { out[Key.rssiSamplingPeriod] = .uint16(rssiSamplingPeriod) }
        return out
    }

    /// Decodes what an application exports (values plain or in variants); a property of
    /// another type, or a missing `Type`, is a `typeMismatch`.
    public init(properties: [String: DBusValue]) throws(DBusError) {
        func value(_ key: String) -> DBusValue? {
            guard var value = properties[key] else { return nil }
            while case .variant(let inner) = value { value = inner }
            return value
        }
        guard case .string(let type)? = value(Key.type) else {
            throw DBusError(.typeMismatch, message: "an advertisement monitor's Type is a string")
        }
        self.type = type
        switch value(Key.patterns) {
        case nil: patterns = []
        case .array(_, let items)?:
            var decoded: [MonitorPattern] = []
            for item in items { decoded.append(try MonitorPattern(dbusValue: item)) }
            patterns = decoded
        default: throw DBusError(.typeMismatch, message: "an advertisement monitor's Patterns are a(yyay)")
        }
        func int16(_ key: String) throws(DBusError) -> Int16? {
            guard let found = value(key) else { return nil }
            guard case .int16(let number) = found else { throw DBusError(.typeMismatch, message: "\(key) is n") }
            return number
        }
        func uint16(_ key: String) throws(DBusError) -> UInt16? {
            guard let found = value(key) else { return nil }
            guard case .uint16(let number) = found else { throw DBusError(.typeMismatch, message: "\(key) is q") }
            return number
        }
        rssiLowThreshold = try int16(Key.rssiLowThreshold)
        rssiHighThreshold = try int16(Key.rssiHighThreshold)
        rssiLowTimeout = try uint16(Key.rssiLowTimeout)
        rssiHighTimeout = try uint16(Key.rssiHighTimeout)
        rssiSamplingPeriod = try uint16(Key.rssiSamplingPeriod)
    }

    /// Why bluetoothd would not activate this monitor (it calls `Release()`), nil when it
    /// would: an unknown type, no pattern, a pattern it refuses, a threshold or timeout out of
    /// range.
    public var refusal: String? {
        guard type == Self.orPatterns else { return "monitor type \"\(type)\"" }
        guard !patterns.isEmpty else { return "no patterns" }
        if let reason = patterns.lazy.compactMap(\.refusal).first { return "a pattern with \(reason)" }
        for threshold in [rssiLowThreshold, rssiHighThreshold].compactMap({ $0 })
        where !((-127...20).contains(threshold) || threshold == 127) {
            return "an RSSI threshold of \(threshold) dBm"
        }
        for timeout in [rssiLowTimeout, rssiHighTimeout].compactMap({ $0 }) where timeout > 300 {
            return "an RSSI timeout of \(timeout) s"
        }
        return nil
    }
}
