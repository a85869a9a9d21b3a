import DBus
import Foundation
import Synchronization

/// The values a characteristic notifies or indicates, for one iteration each.
///
/// Iterating subscribes (the subscription to the `Value` signal is in place before
/// `StartNotify`, so the first values are not lost); ending the loop or cancelling the task
/// unsubscribes, and the last subscriber leaving sends `StopNotify`. Subscriptions survive
/// reconnections. The sequence ends when the peripheral's services change or the subscription
/// is refused.
public struct NotificationSequence: AsyncSequence, Sendable {
    /// What each iteration step yields.
    public typealias Element = Data
    /// What an iteration can throw.
    public typealias Failure = Never

    let peripheral: Peripheral
    let path: ObjectPath
    let validity: HandleValidity
    var acquired = false
    let counters: NotificationCounters
    /// The iteration ``Characteristic/subscribe()`` registered, for the first iterator.
    let prepared: PreparedIteration?

    init(
        peripheral: Peripheral, path: ObjectPath, validity: HandleValidity,
        counters: NotificationCounters = NotificationCounters(), prepared: PreparedIteration? = nil
    ) {
        self.peripheral = peripheral
        self.path = path
        self.validity = validity
        self.counters = counters
        self.prepared = prepared
    }

    /// Values dropped because an iteration fell behind (all iterations of this sequence; each
    /// iterator counts its own in ``AsyncIterator/droppedCount``).
    public var droppedCount: Int { counters.dropped.load(ordering: .relaxed) }

    /// Starts an iteration (and the subscription, if it is the first).
    public func makeAsyncIterator() -> AsyncIterator {
        if let consumer = prepared?.take() { return AsyncIterator(consumer: consumer) }
        let (consumer, subscriber) = Self.makeIteration(peripheral: peripheral, counters: counters)
        guard validity.isValid else {
            // A characteristic that is gone notifies nothing: the iteration ends at once.
            subscriber.buffer.finish()
            return AsyncIterator(consumer: consumer)
        }
        let peripheral = self.peripheral
        let path = self.path
        let acquired = self.acquired
        let task = Task(executorPreference: peripheral.session.connection.executor) { () -> Void in
            // A refused subscription finishes the iteration.
            if acquired {
                await peripheral.addAcquiredSubscriber(subscriber, to: path)
            } else {
                try? await peripheral.addSubscriber(subscriber, to: path)
            }
        }
        Self.unsubscribeOnTermination(subscriber, peripheral: peripheral, path: path, acquired: acquired, task: task)
        return AsyncIterator(consumer: consumer)
    }

    /// One iteration's consuming end and its end of the fan-out, not registered yet.
    static func makeIteration(
        peripheral: Peripheral, counters: NotificationCounters
    ) -> (NotificationConsumer, NotificationSubscriber) {
        let buffer = NotificationBuffer(
            capacity: peripheral.notificationBufferSize, policy: peripheral.notificationBufferPolicy)
        return (NotificationConsumer(buffer), NotificationSubscriber(buffer: buffer, counters: counters))
    }

    /// Ending the iteration (or the subscription failing) unregisters the subscriber.
    static func unsubscribeOnTermination(
        _ subscriber: NotificationSubscriber, peripheral: Peripheral, path: ObjectPath, acquired: Bool = false,
        task: Task<Void, Never>? = nil
    ) {
        peripheral.session.diagnostics.track(subscriber.buffer) {
            task?.cancel()
            Task(executorPreference: peripheral.session.connection.executor) {
                if acquired {
                    await peripheral.removeAcquiredSubscriber(subscriber.id, from: path)
                } else {
                    await peripheral.removeSubscriber(subscriber.id, from: path)
                }
            }
        }
    }

    /// Yields values in arrival order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let consumer: NotificationConsumer
        /// Values this iteration lost because it fell behind and its buffer was full (which ones
        /// follows ``CentralOptions/notificationBufferPolicy``).
        public var droppedCount: Int { consumer.buffer.droppedCount }
        /// The next value, `nil` once the sequence ended.
        public mutating func next() async -> Data? { await consumer.buffer.next() }
        // Not `isolated` to its parameter: such a function switches to it on entry and its
        // caller switches back after the call, two runtime switches per value that, in a task
        // preferring an executor, each look the preference up under the task's lock (callgrind:
        // about 700 instructions per AcquireNotify value). `nonsending`, it runs where the caller
        // runs, on an actor as on a task's executor, with neither. Not `mutating` (the protocol
        // allows either): a borrowed iterator lends its buffer to the wait, where an `inout`
        // one had it retained and released around every value. (`next()` stays `mutating`,
        // so that the usual `var iterator` calling it draws no warning.)
        /// The next value, on the caller's executor.
        public nonisolated(nonsending) func next(isolation actor: (any Actor)?) async -> Data? {
            await consumer.buffer.next()
        }
    }
}

/// Counters shared by a notification sequence's iterations.
final class NotificationCounters: Sendable {
    let dropped = Atomic<Int>(0)
}

/// One iteration's end of the notification fan-out.
final class NotificationSubscriber: Sendable {
    private static let ids = Atomic<UInt64>(1)
    let id = NotificationSubscriber.ids.wrappingAdd(1, ordering: .relaxed).oldValue
    let buffer: NotificationBuffer
    let counters: NotificationCounters

    init(buffer: NotificationBuffer, counters: NotificationCounters) {
        self.buffer = buffer
        self.counters = counters
    }

    func deliver(_ value: Data) {
        if case .dropped = buffer.yield(value) { counters.dropped.add(1, ordering: .relaxed) }
    }
}

/// An iteration registered before its sequence is iterated: the first iterator takes it over;
/// if none does, releasing the sequence unsubscribes.
final class PreparedIteration: Sendable {
    private let slot: PosixMutex<(consumer: NotificationConsumer, subscriber: NotificationSubscriber)?>

    init(consumer: NotificationConsumer, subscriber: NotificationSubscriber) {
        slot = PosixMutex((consumer, subscriber))
    }

    func take() -> NotificationConsumer? { slot.withLock { $0.take() }?.consumer }

    deinit { slot.withLock { $0.take() }?.subscriber.buffer.finish() }
}
