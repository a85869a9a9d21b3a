import Glibc
import Synchronization
import Testing

@testable import DBus

/// Fds the I/O loop reads for its users (``Connection/addReader(_:onReadable:)``): called on
/// the I/O thread when readable, with hang-ups reported, and never again once removed, so the
/// fd can be closed and its number reused.
@Suite struct ReaderTests {
    /// What a reader saw: bytes read, and whether a hang-up was reported.
    final class Seen: Sendable {
        let bytes = PosixMutex<[UInt8]>([])
        let hangUp = Atomic<Bool>(false)
        let calls = Atomic<Int>(0)
    }

    /// Set once, read from any thread.
    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        var isSet: Bool { value.load(ordering: .acquiring) }
        func set() { value.store(true, ordering: .releasing) }
    }

    /// A pipe whose read end is non-blocking.
    static func pipeEnds() throws -> (read: FileDescriptor, write: Int32) {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        return (FileDescriptor(owning: fds[0]), fds[1])
    }

    static func reader(_ seen: Seen, _ fd: Int32) -> @Sendable (Int16) -> Void {
        { events in
            seen.calls.add(1, ordering: .relaxed)
            var byte: UInt8 = 0
            while read(fd, &byte, 1) == 1 { seen.bytes.withLock { $0.append(byte) } }
            if events & Int16(POLLHUP) != 0 { seen.hangUp.store(true, ordering: .releasing) }
        }
    }

    @Test("a readable fd is read on the I/O thread, then a hang-up is reported")
    func readsAndHangUp() async throws {
        try await withConnections(1) { _, connections in
            let connection = connections[0]
            let (readEnd, writeEnd) = try Self.pipeEnds()
            let seen = Seen()
            let added = connection.addReader(readEnd, onReadable: Self.reader(seen, readEnd.rawValue))
            #expect(added)
            var bytes: [UInt8] = [1, 2, 3]
            _ = write(writeEnd, &bytes, 3)
            #expect(try await eventually { seen.bytes.withLock { $0 } == [1, 2, 3] })
            close(writeEnd)
            #expect(try await eventually { seen.hangUp.load(ordering: .acquiring) })
            let closed = Flag()
            connection.removeReader(readEnd) {
                readEnd.close()
                closed.set()
            }
            #expect(try await eventually { closed.isSet })
        }
    }

    @Test("a removed reader is not called again, and another fd with its number is watched afresh")
    func removal() async throws {
        try await withConnections(1) { _, connections in
            let connection = connections[0]
            let (first, firstWrite) = try Self.pipeEnds()
            let seenFirst = Seen()
            connection.addReader(first, onReadable: Self.reader(seenFirst, first.rawValue))
            let removed = Flag()
            connection.removeReader(first) { removed.set() }
            #expect(try await eventually { removed.isSet })
            // Another pipe takes the same number (dup2 swaps it in place, so no parallel test
            // can take the number in between), as a closed fd's number is reused.
            let (second, secondWrite) = try Self.pipeEnds()
            try #require(dup2(second.rawValue, first.rawValue) == first.rawValue)
            second.close()
            close(firstWrite)
            let seenSecond = Seen()
            connection.addReader(first, onReadable: Self.reader(seenSecond, first.rawValue))
            var byte: UInt8 = 9
            _ = write(secondWrite, &byte, 1)
            #expect(try await eventually { seenSecond.bytes.withLock { $0 } == [9] })
            #expect(seenFirst.calls.load(ordering: .relaxed) == 0)
            let done = Flag()
            connection.removeReader(first) {
                first.close()
                done.set()
            }
            #expect(try await eventually { done.isSet })
            close(secondWrite)
        }
    }

    @Test(
        "a datagram reader gets each datagram in order on the I/O thread, cut to its slot size, then the hang-up"
    )
    func datagrams() async throws {
        try await withConnections(1) { _, connections in
            let connection = connections[0]
            // Two readers with different slot sizes: the loop's shared slots grow for the
            // second, and the first's datagrams are still cut to its own.
            let (short, shortWriter) = try DatagramReadTests.pair()
            let (long, longWriter) = try DatagramReadTests.pair()
            let received = PosixMutex<[Int32: [[UInt8]]]>([:])
            let ends = PosixMutex<[Int32: FileDescriptor.DatagramReadEnd]>([:])
            let offThread = Atomic<Int>(0)
            for (reader, slotSize) in [(short, 8), (long, 64)] {
                let fd = reader.rawValue
                let added = connection.addDatagramReader(
                    reader, slotSize: slotSize,
                    onDatagram: { bytes in
                        if !connection.executor.isCurrent { offThread.add(1, ordering: .relaxed) }
                        received.withLock { $0[fd, default: []].append(Array(bytes)) }
                    },
                    onEnd: { end in ends.withLock { $0[fd] = $0[fd] ?? end } })
                #expect(added)
            }
            DatagramReadTests.send([Array(0..<20)], on: longWriter)
            #expect(try await eventually { received.withLock { $0[long.rawValue] } == [Array(0..<20)] })
            DatagramReadTests.send([[1], [2, 2], Array(0..<20)], on: shortWriter)
            let expected: [Int32: [[UInt8]]] = [
                short.rawValue: [[1], [2, 2], Array(0..<8)], long.rawValue: [Array(0..<20)],
            ]
            #expect(try await eventually { received.withLock { $0 } == expected })
            shortWriter.close()
            #expect(try await eventually { ends.withLock { $0[short.rawValue] } == .hungUp })
            #expect(ends.withLock { $0[long.rawValue] } == nil, "the other socket is still open")
            #expect(offThread.load(ordering: .relaxed) == 0)
            let removed = Atomic<Int>(0)
            for reader in [short, long] {
                connection.removeReader(reader) {
                    reader.close()
                    removed.add(1, ordering: .relaxed)
                }
            }
            #expect(try await eventually { removed.load(ordering: .relaxed) == 2 })
            longWriter.close()
        }
    }

    @Test("on a closed connection a reader is refused and removal runs its follow-up at once")
    func closedConnection() async throws {
        try await withConnections(1) { _, connections in
            let connection = connections[0]
            connection.close()
            #expect(try await eventually { connection.isClosed })
            let (readEnd, writeEnd) = try Self.pipeEnds()
            defer { close(writeEnd) }
            let added = connection.addReader(readEnd, onReadable: { _ in })
            #expect(!added)
            let ran = Flag()
            connection.removeReader(readEnd) { ran.set() }
            #expect(ran.isSet)
            readEnd.close()
        }
    }
}
