import Testing

@testable import DBus

/// The I/O loop's timer table as transcripts, with no bus and no clock. The loop sleeps until
/// ``LoopTimers/nearest``. A cancelled timer must not shorten that sleep, and the timers that
/// are due come out in the order of their deadlines.
@Suite struct LoopTimersTests {
    /// Timers 1, 2, 3… set for `deadlines` in turn, their jobs named "a", "b", "c"….
    static func set(_ deadlines: UInt64...) -> LoopTimers<String> {
        var timers = LoopTimers<String>()
        for (index, deadline) in deadlines.enumerated() {
            timers.add(UInt64(index + 1), deadline: deadline, String(UnicodeScalar(UInt8(97 + index))))
        }
        return timers
    }

    @Test("cancelling the nearest timer moves the wait to the next one; cancelling the last leaves none")
    func cancelledNearest() {
        var timers = Self.set(10, 20)
        #expect(timers.nearest == 10)
        #expect(timers.cancel(1) == "a")
        #expect(timers.nearest == 20)
        #expect(timers.cancel(2) == "b")
        #expect(timers.nearest == nil)
        #expect(timers.heldDeadlines == 0)
    }

    @Test("a timer cancelled below the top leaves once the ones before it have run, never running")
    func cancelledBelowTop() {
        var timers = Self.set(10, 20, 30)
        timers.cancel(2)
        #expect(timers.nearest == 10)
        #expect(timers.takeDue(now: 25) == "a")
        #expect(timers.takeDue(now: 25) == nil)
        #expect(timers.nearest == 30)
        #expect(timers.takeDue(now: 30) == "c")
        #expect(timers.nearest == nil)
    }

    @Test("due timers come out in deadline order, not in the order they were set, and only once due")
    func dueInOrder() {
        var timers = LoopTimers<Int>()
        timers.add(7, deadline: 300, 3)
        timers.add(8, deadline: 100, 1)
        timers.add(9, deadline: 200, 2)
        #expect(timers.takeDue(now: 99) == nil)
        var fired: [Int] = []
        while let job = timers.takeDue(now: 250) { fired.append(job) }
        #expect(fired == [1, 2])
        #expect(timers.nearest == 300)
        #expect(timers.count == 1)
    }

    @Test("cancelling an unknown timer, or one that already ran, changes nothing")
    func cancelledUnknown() {
        var timers = Self.set(10)
        #expect(timers.takeDue(now: 10) == "a")
        #expect(timers.cancel(1) == nil)
        #expect(timers.cancel(42) == nil)
        timers.add(2, deadline: 50, "b")
        #expect(timers.nearest == 50)
        #expect(timers.count == 1)
    }

    @Test("a timer set during a walk of due ones runs in the same walk if due, in order")
    func setWhileWalking() {
        var timers = LoopTimers<String>()
        timers.add(1, deadline: 10, "a")
        timers.add(2, deadline: 40, "c")
        var fired: [String] = []
        while let job = timers.takeDue(now: 40) {
            fired.append(job)
            if job == "a" { timers.add(3, deadline: 20, "b") }
        }
        #expect(fired == ["a", "b", "c"])
        #expect(timers.nearest == nil)
    }

    @Test("many cancelled timers do not pile up in the heap: it stays within twice the live ones and a margin")
    func cancelledDoNotAccumulate() {
        var timers = LoopTimers<Int>()
        timers.add(0, deadline: 1_000_000, 0)
        for id in 1...500 {
            timers.add(UInt64(id), deadline: UInt64(2_000_000 + id), id)
            timers.cancel(UInt64(id))
        }
        #expect(timers.count == 1)
        #expect(timers.heldDeadlines <= 2 * timers.count + 17)
        #expect(timers.nearest == 1_000_000)
        #expect(timers.takeDue(now: 1_000_000) == 0)
        #expect(timers.nearest == nil)
    }

    @Test("closing hands back every timer still set, and none of the cancelled ones")
    func removeAll() {
        var timers = Self.set(10, 20, 30)
        timers.cancel(2)
        #expect(timers.removeAll().sorted() == ["a", "c"])
        #expect(timers.nearest == nil)
        #expect(timers.count == 0)
    }
}
