import DBus
import Foundation

/// A notification iteration's buffer, bounded by ``CentralOptions/notificationBufferSize``.
typealias NotificationBuffer = EventBuffer<Data>
/// The consuming end of a notification iteration.
typealias NotificationConsumer = EventConsumer<Data>

/// Values from the I/O thread (or a socket reader) to the one task that iterates them: a
/// first-in first-out buffer, bounded or not, with at most one waiting consumer. Notification
/// iterations (``NotificationBuffer``) and the session's listeners (``SessionEvents``) use it.
///
/// It does what `AsyncStream` did here, at a fraction of the cost on the path of every
/// notification and advertisement: `AsyncStream` lives in another module, so each value paid
/// for unspecialised generic code, run-time metadata look-ups and two locks; this is
/// specialised in this module, takes one lock, and while the consumer keeps up allocates
/// nothing.
///
/// Its end comes once: ``finish()`` (the producer is done; buffered values are still read) or
/// ``terminate()`` (the consumer left: its task was cancelled or its iterator released;
/// buffered values are dropped). `onTermination` then runs, once, outside the lock.
final class EventBuffer<Element: Sendable>: Sendable {
    /// What became of a value offered with ``yield(_:)``.
    enum YieldOutcome {
        /// Kept, or handed to the waiting consumer.
        case enqueued
        /// Lost: the buffer was full (this value under ``NotificationBufferPolicy/dropNewest``,
        /// the oldest buffered one under ``NotificationBufferPolicy/dropOldest``).
        case dropped
        case terminated
    }

    private struct State {
        var values: [Element] = []
        var head = 0
        /// Values lost to a full buffer.
        var dropped = 0
        var waiter: UnsafeContinuation<Element?, Never>?
        var ended = false
        var onTermination: (@Sendable () -> Void)?

        mutating func popFirst() -> Element? {
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
        mutating func end() -> (UnsafeContinuation<Element?, Never>?, (@Sendable () -> Void)?) {
            ended = true
            let waiter = self.waiter
            self.waiter = nil
            let termination = onTermination
            onTermination = nil
            return (waiter, termination)
        }
    }

    /// At most this many values wait for the consumer; nil: no bound.
    let capacity: Int?
    /// Which value a full buffer loses.
    let policy: NotificationBufferPolicy
    private let state = PosixMutex(State())

    init(capacity: Int?, policy: NotificationBufferPolicy = .dropNewest) {
        self.capacity = capacity.map { Swift.max(1, $0) }
        self.policy = policy
    }

    /// How many values this buffer lost because it was full.
    var droppedCount: Int { state.withLock { $0.dropped } }

    /// Runs `action` once when the buffer ends, for either reason; at once if it has ended
    /// already (a producer that started first may have finished it before this is set).
    func onTermination(_ action: @escaping @Sendable () -> Void) {
        let endedAlready = state.withLock { state -> Bool in
            if !state.ended { state.onTermination = action }
            return state.ended
        }
        if endedAlready { action() }
    }

    /// Hands `value` to the waiting consumer, or keeps it if there is room.
    @discardableResult
    func yield(_ value: Element) -> YieldOutcome {
        let (outcome, waiter) = state.withLock { state -> (YieldOutcome, UnsafeContinuation<Element?, Never>?) in
            if state.ended { return (.terminated, nil) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (.enqueued, waiter)
            }
            if let capacity, state.values.count - state.head >= capacity {
                state.dropped += 1
                guard policy == .dropOldest else { return (.dropped, nil) }
                _ = state.popFirst()
                state.values.append(value)
                return (.dropped, nil)
            }
            state.values.append(value)
            return (.enqueued, nil)
        }
        waiter?.resume(returning: value)
        return outcome
    }

    /// The producer is done: the consumer reads what is buffered, then the end.
    func finish() { end(droppingBuffered: false) }

    /// The consumer is gone: buffered values are dropped, and a waiting `next()` returns nil.
    func terminate() { end(droppingBuffered: true) }

    private func end(droppingBuffered: Bool) {
        let (waiter, termination) = state.withLock { state in
            if droppingBuffered {
                state.values.removeAll()
                state.head = 0
            }
            return state.ended ? (nil, nil) : state.end()
        }
        waiter?.resume(returning: nil)
        termination?()
    }

    /// The next value in arrival order; nil once the buffer has ended (or the task is
    /// cancelled, which ends it). Runs on the caller's executor.
    nonisolated(nonsending) func next() async -> Element? {
        // A value, the end (.some(nil)), or nothing yet (nil): no suspension while values wait.
        let ready = state.withLock { state -> Element?? in
            if let value = state.popFirst() { return .some(value) }
            return state.ended ? .some(nil) : nil
        }
        if let ready { return ready }
        // The continuation is unchecked: the state resumes each waiter once, from whichever of
        // yield, finish and terminate takes it out. The handler is the form that stays on the
        // caller's executor, as this function does: the `isolation:` form switched executors
        // on the way in and out, two runtime calls per wait that each took the task's status
        // lock to find its executor preference (a paced notification waits once per value).
        return await _unsafeInheritExecutor_withTaskCancellationHandler {
            await withUnsafeContinuation { (waiter: UnsafeContinuation<Element?, Never>) in
                let now = state.withLock { state -> Element?? in
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

/// The consuming end of an ``EventBuffer``, shared by the copies of one iterator (and the
/// sequence that made it): when the last copy goes, the consumer has left.
final class EventConsumer<Element: Sendable>: Sendable {
    let buffer: EventBuffer<Element>

    init(_ buffer: EventBuffer<Element>) { self.buffer = buffer }

    deinit { buffer.terminate() }
}
