import DBus

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

    private let state = PosixMutex(State())
    private let limit: Int
    private let diagnostics: BLEDiagnostics?

    init(keepingLatest limit: Int = 64, diagnostics: BLEDiagnostics? = nil) {
        self.limit = limit
        self.diagnostics = diagnostics
    }

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
            diagnostics.track(continuation)
            continuation.finish()
            return stream
        }
        diagnostics.track(continuation) { [weak self] _ in
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
