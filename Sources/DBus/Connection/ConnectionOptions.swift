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

    /// Whether the connection comes back when the bus goes away (the daemon stopped, the
    /// socket reset), and how soon; nil (the default): it closes for good, as libdbus's do.
    public var reconnection: BusReconnection?

    /// The defaults.
    public init() {}
}

/// How a ``Connection`` comes back after losing its bus (``ConnectionOptions/reconnection``).
///
/// When the bus goes, every call under way fails with ``DBusError/Code/disconnected``, every
/// subscription ends, and calls made meanwhile fail at once; the I/O thread (and with it the
/// connection's executor) stays. It connects again after `initialDelay`, then after twice as
/// long each time, up to `maximumDelay`, until the address answers; the bus gives it a new
/// unique name, and ``Connection/whenReopened(_:)`` handlers run. Names it owned, match rules
/// and subscriptions are not restored: the handlers make them again. Exported objects stay.
public struct BusReconnection: Sendable, Hashable {
    /// The first wait after the bus went.
    public var initialDelay: Duration
    /// The longest wait between attempts.
    public var maximumDelay: Duration

    /// Attempts after `initialDelay`, doubling up to `maximumDelay`.
    public init(initialDelay: Duration = .milliseconds(100), maximumDelay: Duration = .seconds(2)) {
        self.initialDelay = initialDelay
        self.maximumDelay = max(initialDelay, maximumDelay)
    }
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

extension Connection.Bus {
    /// The address to open again after losing the bus: a `guid=` in it named the daemon that
    /// went away, and libdbus refuses a server whose GUID differs (a restarted daemon's does).
    var reopening: Connection.Bus {
        guard case .address(let address) = self else { return self }
        let kept = address.split(separator: ";").map { part in
            part.split(separator: ",").filter { !$0.hasPrefix("guid=") }.joined(separator: ",")
        }
        return .address(kept.joined(separator: ";"))
    }
}
