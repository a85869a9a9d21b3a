import Synchronization

/// Events many tasks observe, each subscriber holding the latest `limit` when it falls behind.
///
/// Events are yielded under the lock, so two concurrent `yield` calls reach every subscriber
/// in the same order, and a subscriber registered during a yield sees it or not, never half.
final class EventBroadcast<Event: Sendable>: Sendable {
    private struct State {
        var subscribers: [UInt64: AsyncStream<Event>.Continuation] = [:]
        var next: UInt64 = 0
        var finished = false
    }

    private let state = Mutex(State())
    private let limit: Int

    init(keepingLatest limit: Int = 64) { self.limit = limit }

    func yield(_ event: Event) {
        state.withLock { state in
            for subscriber in state.subscribers.values { subscriber.yield(event) }
        }
    }

    /// A stream of the events from now on (after `first`, when given), until ``finish()``.
    func stream(startingWith first: Event? = nil) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(limit))
        let id: UInt64? = state.withLock { state in
            if let first { continuation.yield(first) }
            guard !state.finished else { return nil }
            state.next += 1
            state.subscribers[state.next] = continuation
            return state.next
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every subscriber's stream; later subscribers get an ended stream.
    func finish() {
        let subscribers = state.withLock { state -> [AsyncStream<Event>.Continuation] in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
