import Synchronization

/// A value many tasks observe: each subscriber first gets the current value, then every
/// change, keeping only the latest if it falls behind (state streams must never block).
final class Broadcast<Value: Sendable & Equatable>: Sendable {
    private struct State {
        var value: Value
        var subscribers = SubscriberTable<Value>()
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
            return state.subscribers.all
        }
        for subscriber in subscribers { subscriber.yield(value) }
    }

    /// The current value, then changes, until ``finish()``.
    func stream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            continuation.yield(state.value)
            return state.subscribers.add(continuation)
        }
        diagnostics.follow(continuation, id: id) { [weak self] id in self?.state.withLock { $0.subscribers.remove(id) }
        }
        return stream
    }

    /// Ends every subscriber's stream.
    func finish() {
        for subscriber in state.withLock({ $0.subscribers.finish() }) { subscriber.finish() }
    }
}
