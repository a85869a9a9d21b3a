/// A logging hook shaped like swift-log's `Logger`, off by default. Hand one to
/// ``CentralOptions/logger`` to trace every D-Bus call the SDK makes.
///
/// Payload bytes are logged only with ``includesPayloads`` set: they may be personal data.
public struct BLELogger: Sendable {
    /// Severity, as swift-log's levels; a library logs at trace and debug, info for rare
    /// lifecycle events.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        /// Every D-Bus call and signal.
        case trace
        /// State changes worth knowing when debugging.
        case debug
        /// Rare lifecycle events (bluetoothd restarted, adapter powered off).
        case info
        /// Something went wrong that the SDK recovered from (a damaged state file set aside, a
        /// restored subscription that could not be made again).
        case warning

        /// A stable order, for sorting.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Key–value context, e.g. `["path": "/org/bluez/hci0"]`.
    public typealias Metadata = [String: String]

    /// Messages below this level are dropped before they are formatted.
    public var level: Level
    /// Whether characteristic values and other payload bytes are included.
    public var includesPayloads: Bool
    private let sink: (@Sendable (Level, String, Metadata) -> Void)?

    /// A logger that sends messages at or above `level` to `sink`.
    public init(
        level: Level = .debug, includesPayloads: Bool = false,
        sink: @escaping @Sendable (Level, String, Metadata) -> Void
    ) {
        self.level = level
        self.includesPayloads = includesPayloads
        self.sink = sink
    }

    /// The default: logs nothing.
    public static let disabled = BLELogger()

    private init() {
        level = .info
        includesPayloads = false
        sink = nil
    }

    /// Whether messages at `level` would be logged.
    public func isEnabled(_ level: Level) -> Bool { sink != nil && level >= self.level }

    /// Logs a message built only when enabled.
    public func log(_ level: Level, _ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        guard let sink, level >= self.level else { return }
        sink(level, message(), metadata())
    }

    /// A byte count, or the bytes themselves when payloads may be logged.
    func payload(_ bytes: [UInt8]) -> String {
        includesPayloads ? bytes.map { String($0, radix: 16) }.joined(separator: " ") : "\(bytes.count) B"
    }
}
