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

/// Shared between the subscription value, its stream and the router.
final class SubscriptionState: Sendable {
    let id: UInt64
    let rules: [MatchRule]
    let dropped = Atomic<Int>(0)
    let continuation: AsyncStream<DBusMessage>.Continuation
    private let core: ConnectionCore

    init(id: UInt64, rules: [MatchRule], continuation: AsyncStream<DBusMessage>.Continuation, core: ConnectionCore) {
        self.id = id
        self.rules = rules
        self.continuation = continuation
        self.core = core
    }

    func cancel() { continuation.finish() }

    /// Called by the stream when it terminates for any reason.
    func terminated() {
        let id = self.id
        core.enqueue { loop in loop.removeSubscription(id) }
    }

    func deliver(_ message: DBusMessage) {
        if case .dropped = continuation.yield(message) {
            dropped.add(1, ordering: .relaxed)
        }
    }
}
