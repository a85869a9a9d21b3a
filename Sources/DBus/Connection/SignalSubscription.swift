import Synchronization

/// The signals matching one ``MatchRule``, as an `AsyncSequence` of messages.
///
/// Buffering follows the ``SignalBuffering`` it was created with: the I/O thread never waits,
/// and messages that do not fit are dropped and counted in ``droppedCount``. The sequence ends
/// when the connection closes or is lost, or when ``cancel()`` is called; dropping every
/// reference to the subscription (or cancelling the task that iterates it) also ends it and
/// removes its match rule from the bus once no other subscription needs it.
public struct SignalSubscription: AsyncSequence, Sendable {
    /// What each iteration step yields.
    public typealias Element = DBusMessage

    let stream: AsyncStream<DBusMessage>
    let state: SubscriptionState

    /// The match rules this subscription was made with (a message matching any is delivered).
    public var rules: [MatchRule] { state.rules }

    /// Messages dropped because the buffer was full.
    public var droppedCount: Int { state.dropped.load(ordering: .relaxed) }

    /// Ends the subscription now.
    public func cancel() { state.cancel() }

    /// Iterates the messages in the order the bus delivered them.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<DBusMessage>.AsyncIterator
        /// The next message, or `nil` once the subscription has ended.
        public mutating func next() async -> DBusMessage? { await base.next() }
    }

    /// Starts iterating.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
}

/// Shared between the subscription value, its stream (or handler) and the router.
final class SubscriptionState: Sendable {
    /// Where matching messages go.
    enum Sink: Sendable {
        /// Into a stream, buffered per its policy.
        case stream(AsyncStream<DBusMessage>.Continuation)
        /// To a function called on the I/O thread, in delivery order; `ended` runs once when
        /// the subscription ends (cancelled, or the connection closed). `preview` sees each
        /// signal first, as received, and takes those it returns true for.
        case handler(
            @Sendable (DBusMessage) -> Void, ended: @Sendable () -> Void,
            preview: (@Sendable (borrowing ReceivedSignal) -> Bool)?)
    }

    let id: UInt64
    let rules: [MatchRule]
    let dropped = Atomic<Int>(0)
    let sink: Sink
    private let finished = Atomic<Bool>(false)
    private let core: ConnectionCore

    init(id: UInt64, rules: [MatchRule], sink: Sink, core: ConnectionCore) {
        self.id = id
        self.rules = rules
        self.sink = sink
        self.core = core
    }

    /// Ends the subscription: a stream finishes (its termination unregisters it), a handler is
    /// unregistered and told it ended.
    func cancel() {
        switch sink {
        case .stream(let continuation): continuation.finish()
        case .handler: terminated()
        }
    }

    /// Called when the subscription ends for any reason; runs once.
    func terminated() {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let id = self.id
        core.enqueue { loop in loop.removeSubscription(id) }
        if case .handler(_, let ended, _) = sink { ended() }
    }

    /// Ends the subscription because the connection ended (the router already dropped it).
    func finish() {
        switch sink {
        case .stream(let continuation): continuation.finish()
        case .handler(_, let ended, _):
            guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
            ended()
        }
    }

    func deliver(_ message: DBusMessage) {
        switch sink {
        case .stream(let continuation):
            if case .dropped = continuation.yield(message) {
                dropped.add(1, ordering: .relaxed)
            }
        case .handler(let handle, _, _):
            if !finished.load(ordering: .relaxed) { handle(message) }
        }
    }
}
