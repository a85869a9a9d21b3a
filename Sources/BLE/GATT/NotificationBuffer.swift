import DBus
import Foundation

/// One notification iteration's values, from the I/O thread (or the socket reader) to the task
/// that iterates: a bounded first-in first-out buffer with at most one waiting consumer.
///
/// It does what `AsyncStream<Data>` with `.bufferingOldest` did here, at a fraction of the cost
/// on the path of every notification: `AsyncStream` lives in another module, so each value paid
/// for unspecialized generic code, run-time metadata look-ups and two locks; this is one lock
/// and, while the consumer keeps up, no allocation but the value's.
///
/// Its end comes once: ``finish()`` (the producer is done; buffered values are still read) or
/// ``terminate()`` (the consumer left: its task was cancelled or its iterator released;
/// buffered values are dropped). `onTermination` then runs, once, outside the lock.
final class NotificationBuffer: Sendable {
    /// What became of a value offered with ``yield(_:)``.
    enum YieldOutcome {
        case enqueued, dropped, terminated
    }

    private struct State {
        var values: [Data] = []
        var head = 0
        var waiter: UnsafeContinuation<Data?, Never>?
        var ended = false
        var onTermination: (@Sendable () -> Void)?

        var isEmpty: Bool { head == values.count }

        mutating func popFirst() -> Data? {
            guard head < values.count else { return nil }
            let value = values[head]
            head += 1
            if head == values.count {
                values.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64 && head * 2 >= values.count {
                values.removeFirst(head)
                head = 0
            }
            return value
        }

        /// Marks the end; returns the waiter to resume (with nil) and the termination to run.
        mutating func end() -> (UnsafeContinuation<Data?, Never>?, (@Sendable () -> Void)?) {
            ended = true
            let waiter = self.waiter
            self.waiter = nil
            let termination = onTermination
            onTermination = nil
            return (waiter, termination)
        }
    }

    /// At most this many values wait for the consumer; later ones are dropped.
    let capacity: Int
    private let state = PosixMutex(State())

    init(capacity: Int) { self.capacity = Swift.max(1, capacity) }

    /// Runs once when the buffer ends, for either reason. Set before the buffer is shared.
    func onTermination(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.onTermination = action }
    }

    /// Hands `value` to the waiting consumer, or keeps it if there is room.
    @discardableResult
    func yield(_ value: Data) -> YieldOutcome {
        let (outcome, waiter) = state.withLock { state -> (YieldOutcome, UnsafeContinuation<Data?, Never>?) in
            if state.ended { return (.terminated, nil) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (.enqueued, waiter)
            }
            guard state.values.count - state.head < capacity else { return (.dropped, nil) }
            state.values.append(value)
            return (.enqueued, nil)
        }
        waiter?.resume(returning: value)
        return outcome
    }

    /// The producer is done: the consumer reads what is buffered, then the end.
    func finish() {
        let (waiter, termination) = state.withLock { state in
            state.ended ? (nil, nil) : state.end()
        }
        waiter?.resume(returning: nil)
        termination?()
    }

    /// The consumer is gone: buffered values are dropped, and a waiting `next()` returns nil.
    func terminate() {
        let (waiter, termination) = state.withLock { state in
            state.values.removeAll()
            state.head = 0
            return state.ended ? (state.waiter.take(), nil) : state.end()
        }
        waiter?.resume(returning: nil)
        termination?()
    }

    /// The next value in arrival order; nil once the buffer has ended (or the task is
    /// cancelled, which ends it). Runs on the caller's executor.
    nonisolated(nonsending) func next() async -> Data? {
        enum Ready {
            case value(Data)
            case end, wait
        }
        let ready = state.withLock { state -> Ready in
            if let value = state.popFirst() { return .value(value) }
            return state.ended ? .end : .wait
        }
        switch ready {
        case .value(let value): return value
        case .end: return nil
        case .wait: break
        }
        // The continuation is unchecked: the state resumes each waiter once, from whichever of
        // yield, finish and terminate takes it out.
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (waiter: UnsafeContinuation<Data?, Never>) in
                let now = state.withLock { state -> Data?? in
                    if let value = state.popFirst() { return .some(value) }
                    // Ended, or another task already waits on this iteration (a misuse): nil.
                    if state.ended || state.waiter != nil { return .some(nil) }
                    state.waiter = waiter
                    return nil
                }
                if let now { waiter.resume(returning: now) }
            }
        } onCancel: {
            terminate()
        }
    }
}

/// The consuming end of a ``NotificationBuffer``, shared by the copies of one iterator: when
/// the last copy goes (the loop ended with `break`, say), the consumer has left.
final class NotificationConsumer: Sendable {
    let buffer: NotificationBuffer

    init(_ buffer: NotificationBuffer) { self.buffer = buffer }

    deinit { buffer.terminate() }
}
