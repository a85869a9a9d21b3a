/// Tunables of a ``Connection``, with defaults that suit the system bus.
public struct ConnectionOptions: Sendable {
    /// The deadline of a call when the caller gives none. libdbus uses 25 s; so do we.
    public var defaultTimeout: Duration = .seconds(25)
    /// Calls awaiting a reply at once; more wait in a queue (their deadline still runs).
    /// The system bus refuses a 129th pending reply per connection (`max_replies_per_connection`),
    /// so the default stays at 128.
    public var maxCallsInFlight: Int = 128
    /// The buffer of a signal subscription when the caller gives none.
    public var defaultSignalBuffering: SignalBuffering = .default

    /// How exported objects answer the standard interfaces.
    public var exportConventions: ExportConventions = .standard

    /// The defaults.
    public init() {}
}

/// How exported objects present themselves through the standard interfaces.
public enum ExportConventions: Sendable, Hashable {
    /// Plain D-Bus: object-manager dicts list only the object's own interfaces; property errors
    /// use `UnknownInterface`/`UnknownProperty`; argument mismatches `InvalidArgs`.
    case standard
    /// As BlueZ's gdbus library does, for a faithful bluetoothd stand-in: object-manager dicts
    /// also list `org.freedesktop.DBus.Introspectable` and `…Properties` with empty dicts;
    /// `Properties.Get` errors are `InvalidArgs "No such property 'X'"`; an unknown method or a
    /// signature mismatch is `UnknownMethod "Method \"X\" with signature \"Y\" on interface
    /// \"Z\" doesn't exist\n"`.
    case gdbus
}

/// How a signal subscription buffers messages its consumer has not taken yet.
///
/// The I/O thread never waits for a consumer: when the buffer is full, the newest message is
/// dropped and counted (``SignalSubscription/droppedCount``), so a slow reader can see it
/// fell behind.
public struct SignalBuffering: Sendable, Hashable {
    /// The most messages held for the consumer; `nil` for no limit.
    public var limit: Int?

    /// Keep at most `limit` messages; drop (and count) newer ones while full.
    public static func bounded(_ limit: Int) -> SignalBuffering { SignalBuffering(limit: max(1, limit)) }
    /// Never drop; memory grows while the consumer is behind. For streams whose loss would
    /// corrupt state (object-tree mirrors) and whose consumer is known to keep up.
    public static let unbounded = SignalBuffering(limit: nil)
    /// 8,192 messages: about a second of the fastest notification rate the bus sustains.
    public static let `default` = SignalBuffering(limit: 8192)
}
