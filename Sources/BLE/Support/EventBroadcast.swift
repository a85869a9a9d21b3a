import Synchronization

/// Events many tasks observe, each subscriber holding the latest 64 when it falls behind.
final class EventBroadcast<Event: Sendable>: Sendable {
    private struct State {
        var subscribers: [UInt64: AsyncStream<Event>.Continuation] = [:]
        var next: UInt64 = 0
        var finished = false
    }

    private let state = Mutex(State())
    private let diagnostics: BLEDiagnostics?

    init(diagnostics: BLEDiagnostics? = nil) { self.diagnostics = diagnostics }

    func yield(_ event: Event) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(event) }
    }

    func stream() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let id: UInt64? = state.withLock { state in
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

    func finish() {
        let subscribers = state.withLock { state -> [AsyncStream<Event>.Continuation] in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
