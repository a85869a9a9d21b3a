import Foundation
import Synchronization
import Testing

@testable import BLE

/// The buffer between the I/O thread and a notification iteration: order, bounds, and its one
/// end (producer finished, or consumer gone) with the termination run exactly once.
@Suite struct NotificationBufferTests {
    final class Count: Sendable {
        let value = Atomic<Int>(0)
        var current: Int { value.load(ordering: .acquiring) }
        func add() { value.add(1, ordering: .releasing) }
    }

    static func values(_ range: ClosedRange<UInt8>) -> [Data] { range.map { Data([$0]) } }

    @Test("values come out in arrival order; beyond the capacity they are dropped, not reordered")
    func orderAndCapacity() async {
        let buffer = NotificationBuffer(capacity: 3)
        let outcomes = Self.values(1...5).map { buffer.yield($0) }
        #expect(outcomes == [.enqueued, .enqueued, .enqueued, .dropped, .dropped])
        #expect(await buffer.next() == Data([1]))
        #expect(buffer.yield(Data([6])) == .enqueued)
        #expect(await buffer.next() == Data([2]))
        #expect(await buffer.next() == Data([3]))
        #expect(await buffer.next() == Data([6]))
    }

    @Test("a long run keeps its order while the consumer keeps up and falls behind in turns")
    func longRun() async {
        let buffer = NotificationBuffer(capacity: 1000)
        var received: [Data] = []
        for round in 0..<50 {
            for index in 0..<(round % 7 + 1) { buffer.yield(Data([UInt8(round), UInt8(index)])) }
            for _ in 0..<(round % 7 + 1) { received.append(await buffer.next() ?? Data()) }
        }
        let expected = (0..<50).flatMap { round in (0..<(round % 7 + 1)).map { Data([UInt8(round), UInt8($0)]) } }
        #expect(received == expected)
    }

    @Test("a consumer waiting on an empty buffer is handed the next value")
    func waiterGetsValue() async {
        let buffer = NotificationBuffer(capacity: 4)
        let waiting = Task { await buffer.next() }
        // Whether it waits already or not, the value reaches it.
        buffer.yield(Data([7]))
        #expect(await waiting.value == Data([7]))
        buffer.finish()
        #expect(await buffer.next() == nil)
    }

    @Test("finish: buffered values are still read, then the end; the termination runs once")
    func finishDrains() async {
        let buffer = NotificationBuffer(capacity: 4)
        let ended = Count()
        buffer.onTermination { ended.add() }
        buffer.yield(Data([1]))
        buffer.yield(Data([2]))
        buffer.finish()
        buffer.finish()
        #expect(buffer.yield(Data([3])) == .terminated)
        #expect(await buffer.next() == Data([1]))
        #expect(await buffer.next() == Data([2]))
        #expect(await buffer.next() == nil)
        buffer.terminate()
        #expect(ended.current == 1)
    }

    @Test("terminate: buffered values are dropped and a waiting consumer gets the end")
    func terminateWakesWaiter() async {
        let buffer = NotificationBuffer(capacity: 4)
        let ended = Count()
        buffer.onTermination { ended.add() }
        let waiting = Task { await buffer.next() }
        // Terminated whether or not the consumer already waits: it ends either way.
        buffer.terminate()
        #expect(await waiting.value == nil)
        buffer.yield(Data([1]))
        #expect(await buffer.next() == nil)
        #expect(ended.current == 1)
    }

    @Test("cancelling the iterating task ends the iteration once, with nil")
    func cancellation() async {
        let buffer = NotificationBuffer(capacity: 4)
        let ended = Count()
        buffer.onTermination { ended.add() }
        let waiting = Task { await buffer.next() }
        waiting.cancel()
        #expect(await waiting.value == nil)
        #expect(buffer.yield(Data([1])) == .terminated)
        #expect(ended.current == 1)
    }

    @Test("releasing the last copy of the consumer ends the iteration")
    func consumerRelease() async {
        let buffer = NotificationBuffer(capacity: 4)
        let ended = Count()
        buffer.onTermination { ended.add() }
        var consumer: NotificationConsumer? = NotificationConsumer(buffer)
        var copy = consumer
        consumer = nil
        #expect(ended.current == 0, "a copy is left")
        #expect(copy != nil)
        copy = nil
        #expect(ended.current == 1)
        #expect(buffer.yield(Data([1])) == .terminated)
    }

    @Test("a termination set after the buffer ended runs at once, and only once")
    func terminationAfterTheEnd() async {
        let buffer = NotificationBuffer(capacity: 4)
        buffer.finish()
        let ended = Count()
        buffer.onTermination { ended.add() }
        #expect(ended.current == 1)
        buffer.terminate()
        buffer.finish()
        #expect(ended.current == 1)
    }
}
