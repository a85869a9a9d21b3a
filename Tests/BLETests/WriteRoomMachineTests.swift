import Testing

@testable import BLE

/// Transcripts of a write channel's wait for room (``WriteRoomMachine``), without a socket:
/// events in, actions out. Waiters are names.
@Suite("Write channel wait-for-room transcripts")
struct WriteRoomMachineTests {
    typealias Machine = WriteRoomMachine<String>

    @Test("the first wait starts the watch; room wakes every waiter in order and stops it")
    func roomWakesAllInOrder() {
        var machine = Machine()
        #expect(machine.wait(1, "a") == [.watch(true)])
        #expect(machine.wait(2, "b") == [], "one watch for all")
        #expect(machine.roomAvailable() == [.resume("a", .room), .resume("b", .room), .watch(false)])
        #expect(machine.roomAvailable() == [], "a watch already stopped fires no more")
        #expect(machine.wait(3, "c") == [.watch(true)], "the next wait watches again")
    }

    @Test("a cancelled waiter ends at once; the last one's cancellation stops the watch")
    func cancellation() {
        var machine = Machine()
        #expect(machine.wait(1, "a") == [.watch(true)])
        #expect(machine.wait(2, "b") == [])
        #expect(machine.cancel(1) == [.resume("a", .cancelled)], "b still waits: the watch stays")
        #expect(machine.cancel(2) == [.resume("b", .cancelled), .watch(false)])
        #expect(machine.roomAvailable() == [])
    }

    @Test("a cancellation that overtakes its wait ends the wait as it starts, without a watch")
    func cancellationBeforeTheWait() {
        var machine = Machine()
        #expect(machine.cancel(1) == [])
        #expect(machine.wait(1, "a") == [.resume("a", .cancelled)])
        #expect(machine.wait(2, "b") == [.watch(true)], "another wait is not touched by it")
    }

    @Test("a cancellation after its wait ended with room is forgotten once the wait is finished")
    func cancellationAfterRoom() {
        var machine = Machine()
        #expect(machine.wait(1, "a") == [.watch(true)])
        #expect(machine.roomAvailable() == [.resume("a", .room), .watch(false)])
        #expect(machine.cancel(1) == [])
        machine.finished(1)
        #expect(machine.wait(1, "a again") == [.watch(true)], "no stale cancellation ends a later wait")
    }

    @Test("closing ends every wait and lets the socket go, once; later waits end at once")
    func close() {
        var machine = Machine()
        #expect(machine.wait(1, "a") == [.watch(true)])
        #expect(machine.wait(2, "b") == [])
        #expect(machine.close() == [.resume("a", .closed), .resume("b", .closed), .release])
        #expect(machine.closed)
        #expect(machine.close() == [])
        #expect(machine.roomAvailable() == [])
        #expect(machine.cancel(3) == [])
        #expect(machine.wait(3, "c") == [.resume("c", .closed)])
    }

    @Test("closing an idle channel lets the socket go without a watch to stop")
    func closeIdle() {
        var machine = Machine()
        #expect(machine.close() == [.release])
    }
}
