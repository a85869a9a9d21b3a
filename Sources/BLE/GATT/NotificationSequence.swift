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
    public typealias Element = Data
    public typealias Failure = Never

    let peripheral: Peripheral
    let path: ObjectPath
    let waitForSubscription: Bool
    var acquired = false
    let counters = NotificationCounters()

    /// Values dropped because an iteration fell behind (all iterations of this sequence).
    public var droppedCount: Int { counters.dropped.load(ordering: .relaxed) }

    /// Starts an iteration (and the subscription, if it is the first).
    public func makeAsyncIterator() -> AsyncIterator {
        let size = peripheral.notificationBufferSize
        let (stream, continuation) = AsyncStream<Data>.makeStream(bufferingPolicy: .bufferingOldest(Swift.max(1, size)))
        let subscriber = NotificationSubscriber(continuation: continuation, counters: counters)
        let peripheral = self.peripheral
        let path = self.path
        let acquired = self.acquired
        let task = Task(executorPreference: peripheral.session.connection.executor) {
            if acquired {
                await peripheral.addAcquiredSubscriber(subscriber, to: path)
            } else {
                await peripheral.addSubscriber(subscriber, to: path)
            }
        }
        continuation.onTermination = { _ in
            task.cancel()
            Task(executorPreference: peripheral.session.connection.executor) {
                if acquired {
                    await peripheral.removeAcquiredSubscriber(subscriber.id, from: path)
                } else {
                    await peripheral.removeSubscriber(subscriber.id, from: path)
                }
            }
        }
        return AsyncIterator(base: stream.makeAsyncIterator())
    }

    /// Yields values in arrival order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Data>.AsyncIterator
        /// The next value, `nil` once the sequence ended.
        public mutating func next() async -> Data? { await base.next() }
        /// The next value, on the caller's actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Data? {
            await base.next(isolation: actor)
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
    let continuation: AsyncStream<Data>.Continuation
    let counters: NotificationCounters

    init(continuation: AsyncStream<Data>.Continuation, counters: NotificationCounters) {
        self.continuation = continuation
        self.counters = counters
    }

    func deliver(_ value: Data) {
        if case .dropped = continuation.yield(value) { counters.dropped.add(1, ordering: .relaxed) }
    }
}
