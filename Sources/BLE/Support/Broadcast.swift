import DBus

/// A value many tasks observe: each subscriber first gets the current value, then every
/// change, keeping only the latest if it falls behind (state streams must never block).
///
/// The value lock is held while changes are handed to the subscribers (lock order: value,
/// then subscribers), so concurrent changes cannot reach subscribers out of order and a new
/// subscriber misses nothing between reading the value and registering.
final class Broadcast<Value: Sendable & Equatable>: Sendable {
    private let current: PosixMutex<Value>
    private let changes: EventBroadcast<Value>

    init(_ initial: Value, diagnostics: BLEDiagnostics? = nil) {
        current = PosixMutex(initial)
        changes = EventBroadcast(keepingLatest: 1, diagnostics: diagnostics)
    }

    var value: Value { current.withLock { $0 } }

    /// Sets the value; subscribers hear of it only if it changed.
    func set(_ value: Value) {
        current.withLock { current in
            guard current != value else { return }
            current = value
            changes.yield(value)
        }
    }

    /// The current value, then changes, until ``finish()``.
    func stream() -> AsyncStream<Value> {
        current.withLock { changes.stream(startingWith: $0) }
    }

    /// Ends every subscriber's stream.
    func finish() { changes.finish() }
}
