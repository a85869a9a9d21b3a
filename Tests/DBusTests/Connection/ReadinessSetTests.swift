import CDBus
import Glibc
import Testing

@testable import DBus

/// The epoll set the I/O loop sleeps on, with pipes standing in for the bus socket: it reports
/// what `poll` would, changes only what differs, and never misses an fd whose number was reused.
/// (`ReadinessSet` is noncopyable, so each result is taken out before it is checked.)
@Suite struct ReadinessSetTests {
    /// A pipe, closed at `body`'s end unless `body` closed an end itself (then set to -1).
    static func withPipe(_ body: (inout (read: Int32, write: Int32)) throws -> Void) throws {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        var ends = (read: fds[0], write: fds[1])
        defer {
            if ends.read >= 0 { close(ends.read) }
            if ends.write >= 0 { close(ends.write) }
        }
        try body(&ends)
    }

    static func write(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = Glibc.write(fd, &byte, 1)
    }

    /// Sets what `set` watches (nil if that fails), writes a byte into `pipe`, and returns the
    /// fds the next wait finds ready.
    static func readyAfterWriting(
        _ pipe: (read: Int32, write: Int32), wanting wanted: [(fd: Int32, events: Int16)], in set: inout ReadinessSet
    ) -> [Int32]? {
        guard set.update(wanted) else { return nil }
        write(pipe.write)
        let count = set.wait(timeout: 1_000) ?? 0
        return (0..<count).map { set.ready($0).fd }
    }

    static let readable = Int16(POLLIN)
    static let readableOrWritable = Int16(POLLIN | POLLOUT)

    @Test func aReadableFdIsReportedAndAQuietOneTimesOut() throws {
        try Self.withPipe { ends in
            var set = ReadinessSet()
            let open = set.isOpen
            try #require(open)
            let registered = set.update([(ends.read, Self.readable)])
            let quiet = set.wait(timeout: 0)
            Self.write(ends.write)
            let woken = set.wait(timeout: 1_000)
            let ready = woken == 1 ? set.ready(0) : ReadinessSet.Ready(fd: -1, events: 0)
            #expect(registered)
            #expect(quiet == 0)
            #expect(woken == 1)
            #expect(ready.fd == ends.read)
            #expect(ready.events & Int16(POLLIN) != 0)
        }
    }

    @Test func anFdNoLongerWantedIsNotReported() throws {
        try Self.withPipe { ends in
            var set = ReadinessSet()
            _ = set.update([(ends.read, Self.readable)])
            Self.write(ends.write)
            let removed = set.update([])
            let whileUnwanted = set.wait(timeout: 0)
            // Wanted again: level-triggered, so the waiting byte is reported at once.
            let added = set.update([(ends.read, Self.readable)])
            let whileWanted = set.wait(timeout: 1_000)
            #expect(removed && added)
            #expect(whileUnwanted == 0)
            #expect(whileWanted == 1)
        }
    }

    @Test func writabilityIsReportedOnlyWhileWanted() throws {
        try Self.withPipe { ends in
            var set = ReadinessSet()
            _ = set.update([(ends.write, Self.readable)])
            let readOnly = set.wait(timeout: 0)
            let changed = set.update([(ends.write, Self.readableOrWritable)])
            let writable = set.wait(timeout: 1_000)
            let events = writable == 1 ? set.ready(0).events : 0
            #expect(readOnly == 0)
            #expect(changed)
            #expect(writable == 1)
            #expect(events & Int16(POLLOUT) != 0)
        }
    }

    @Test func aHangUpIsReported() throws {
        try Self.withPipe { ends in
            var set = ReadinessSet()
            _ = set.update([(ends.read, Self.readable)])
            close(ends.write)
            ends.write = -1
            let woken = set.wait(timeout: 1_000)
            let events = woken == 1 ? set.ready(0).events : 0
            #expect(woken == 1)
            #expect(events & Int16(POLLHUP) != 0)
        }
    }

    /// A closed fd leaves the epoll set by itself; a new fd given the same number is watched
    /// once forgotten (as the loop does when libdbus removes a watch).
    @Test func aReusedFdNumberIsWatchedAfterForget() throws {
        try Self.withPipe { first in
            try Self.withPipe { second in
                var set = ReadinessSet()
                _ = set.update([(first.read, Self.readable)])
                set.forget(first.read)
                // The number now names the second pipe's read end: `dup2` closes the first's
                // and reuses its number at once, where no parallel test can take it between.
                try #require(dup2(second.read, first.read) == first.read)
                close(second.read)
                second.read = first.read
                first.read = -1
                // Wanted for the same events as before: only the forgetting makes the set
                // register the new fd.
                let woken = Self.readyAfterWriting(second, wanting: [(second.read, Self.readable)], in: &set)
                #expect(woken == [second.read])
            }
        }
    }

    @Test func aClosedFdIsDroppedWithoutFailingTheOthers() throws {
        try Self.withPipe { kept in
            try Self.withPipe { gone in
                var set = ReadinessSet()
                _ = set.update([(kept.read, Self.readable), (gone.read, Self.readable)])
                close(gone.read)
                gone.read = -1
                let woken = Self.readyAfterWriting(kept, wanting: [(kept.read, Self.readable)], in: &set)
                #expect(woken == [kept.read])
            }
        }
    }
}
