import Synchronization

/// A value many tasks observe: each subscriber first gets the current value, then every
/// change, keeping only the latest if it falls behind (state streams must never block).
final class Broadcast<Value: Sendable & Equatable>: Sendable {
    private struct State {
        var value: Value
        var subscribers: [UInt64: AsyncStream<Value>.Continuation] = [:]
        var next: UInt64 = 0
        var finished = false
    }

    private let state: Mutex<State>
    private let diagnostics: BLEDiagnostics?

    init(_ initial: Value, diagnostics: BLEDiagnostics? = nil) {
        state = Mutex(State(value: initial))
        self.diagnostics = diagnostics
    }

    var value: Value { state.withLock { $0.value } }

    /// Sets the value; subscribers hear of it only if it changed.
    func set(_ value: Value) {
        let subscribers = state.withLock { state -> [AsyncStream<Value>.Continuation] in
            guard state.value != value else { return [] }
            state.value = value
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(value) }
    }

    /// The current value, then changes, until ``finish()``.
    func stream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id: UInt64? = state.withLock { state in
            continuation.yield(state.value)
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

    /// Ends every subscriber's stream.
    func finish() {
        let subscribers = state.withLock { state -> [AsyncStream<Value>.Continuation] in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
