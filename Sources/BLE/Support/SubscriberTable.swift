/// The streams subscribed to a broadcast, by id, kept under the broadcast's lock; after
/// ``finish()`` it takes no more.
struct SubscriberTable<Element: Sendable> {
    typealias Continuation = AsyncStream<Element>.Continuation

    private var subscribers: [UInt64: Continuation] = [:]
    private var next: UInt64 = 0
    private var finished = false

    var all: [Continuation] { Array(subscribers.values) }

    /// Registers `continuation`; nil once finished.
    mutating func add(_ continuation: Continuation) -> UInt64? {
        guard !finished else { return nil }
        next += 1
        subscribers[next] = continuation
        return next
    }

    mutating func remove(_ id: UInt64) { subscribers[id] = nil }

    /// Takes no more subscribers and hands back the current ones, to be finished outside the lock.
    mutating func finish() -> [Continuation] {
        finished = true
        defer { subscribers.removeAll() }
        return all
    }
}

extension BLEDiagnostics? {
    /// Ties a new broadcast stream to its registration `id`: ended at once when there is none
    /// (the broadcast had finished), otherwise unregistered through `remove` when it ends.
    func follow<Element>(
        _ continuation: AsyncStream<Element>.Continuation, id: UInt64?,
        remove: @escaping @Sendable (UInt64) -> Void
    ) {
        guard let id else {
            track(continuation)
            continuation.finish()
            return
        }
        track(continuation) { _ in remove(id) }
    }
}
