import Glibc
import Testing

@testable import DBus

/// `FileDescriptor.receiveDatagrams(slotSize:_:)` on a real socket pair: batches of
/// `recvmmsg`, empty datagrams told from the end of file, and the end itself.
@Suite struct DatagramReadTests {
    /// A connected `SOCK_SEQPACKET` pair, as BlueZ's AcquireNotify hands out; the reading end is
    /// non-blocking.
    static func pair() throws -> (reader: FileDescriptor, writer: FileDescriptor) {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw DBusError(.io, message: "socketpair failed: errno \(errno)")
        }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        return (FileDescriptor(owning: ends[0]), FileDescriptor(owning: ends[1]))
    }

    static func send(_ datagrams: [[UInt8]], on writer: FileDescriptor) {
        for datagram in datagrams {
            let sent = datagram.withUnsafeBytes { Glibc.send(writer.rawValue, $0.baseAddress, $0.count, 0) }
            #expect(sent == datagram.count)
        }
    }

    static func read(_ reader: FileDescriptor, slotSize: Int = 64) -> ([[UInt8]], FileDescriptor.DatagramReadEnd) {
        var received: [[UInt8]] = []
        let end = reader.receiveDatagrams(slotSize: slotSize) { received.append(Array($0)) }
        return (received, end)
    }

    /// Reads until the socket reports the peer's end (or fails): up to then, what it reports
    /// is an empty queue. A test running beside this one that starts a process (a bus daemon)
    /// forks with a copy of every descriptor until its exec closes them, so for that moment the
    /// peer's end, closed here, is still open in the child, and the hang-up comes when the
    /// copy goes: then one more read. (A reader that never tells the end fails here, and the
    /// 30 s wait only keeps a broken one from hanging the suite.)
    static func readToEnd(_ reader: FileDescriptor) -> ([[UInt8]], FileDescriptor.DatagramReadEnd) {
        var (received, end) = read(reader)
        guard end == .drained else { return (received, end) }
        var readable = pollfd(fd: reader.rawValue, events: Int16(POLLIN), revents: 0)
        guard poll(&readable, 1, 30_000) > 0 else { return (received, end) }
        let (more, next) = read(reader)
        received += more
        end = next
        return (received, end)
    }

    /// Datagram `index` of a run: its length varies with it, every fifth is empty.
    static func datagram(_ index: Int) -> [UInt8] {
        index % 5 == 0 ? [] : (0..<(index % 23)).map { UInt8(truncatingIfNeeded: index &+ $0) }
    }

    @Test("more datagrams than one batch arrive complete and in order, empty ones included, the last one too")
    func severalBatches() throws {
        let (reader, writer) = try Self.pair()
        // Ends with an empty datagram while the peer stays: delivered, not taken for the end.
        let sent = (1...(FileDescriptor.datagramBatch * 2 + 5)).map(Self.datagram) + [[]]
        Self.send(sent, on: writer)
        let (received, end) = Self.read(reader)
        #expect(received == sent)
        #expect(end == .drained)
        let (again, endAgain) = Self.read(reader)
        #expect(again.isEmpty)
        #expect(endAgain == .drained)
    }

    @Test("a batch that fills exactly is read again, and the next read finds the queue empty")
    func exactBatch() throws {
        let (reader, writer) = try Self.pair()
        let sent = (1...FileDescriptor.datagramBatch).map { [UInt8(truncatingIfNeeded: $0)] }
        Self.send(sent, on: writer)
        let (received, end) = Self.read(reader)
        #expect(received == sent)
        #expect(end == .drained)
    }

    @Test("what the peer sent before closing is delivered, then the hang-up, with no empty datagram made up")
    func hangUp() throws {
        let (reader, writer) = try Self.pair()
        // An empty datagram among others is one (data follows it); the end adds none.
        let sent: [[UInt8]] = [[1], [], [2, 3], [4]]
        Self.send(sent, on: writer)
        writer.close()
        let (received, end) = Self.readToEnd(reader)
        #expect(received == sent)
        #expect(end == .hungUp)
    }

    @Test("a peer that closed with our datagrams unread (a reset): what it sent is still delivered, then the hang-up")
    func resetByPeer() throws {
        let (reader, writer) = try Self.pair()
        var ours: UInt8 = 9
        #expect(Glibc.send(reader.rawValue, &ours, 1, 0) == 1, "left unread in the peer's socket")
        let sent: [[UInt8]] = [[1], [2, 3]]
        Self.send(sent, on: writer)
        writer.close()
        let (received, end) = Self.readToEnd(reader)
        #expect(received == sent)
        #expect(end == .hungUp)
    }

    @Test("a hang-up with nothing queued ends at once")
    func hangUpAlone() throws {
        let (reader, writer) = try Self.pair()
        writer.close()
        let (received, end) = Self.readToEnd(reader)
        #expect(received.isEmpty)
        #expect(end == .hungUp)
    }

    @Test("a datagram longer than a slot is cut to it, and the next one is whole")
    func longDatagram() throws {
        let (reader, writer) = try Self.pair()
        let long = (0..<100).map { UInt8($0) }
        Self.send([long, [7, 8]], on: writer)
        let (received, end) = Self.read(reader, slotSize: 16)
        #expect(received == [Array(long.prefix(16)), [7, 8]])
        #expect(end == .drained)
    }

    @Test("a closed descriptor is a failure, not a hang-up or an empty queue")
    func closedDescriptor() throws {
        let (reader, _) = try Self.pair()
        reader.close()
        let (received, end) = Self.read(reader)
        #expect(received.isEmpty)
        #expect(end == .failed(EBADF))
    }

    @Test("slots made once serve every read of a socket: each read hands over what it received, cut to a slot")
    func reusedSlots() throws {
        let (reader, writer) = try Self.pair()
        let slots = FileDescriptor.DatagramSlots(slotSize: 8)
        var received: [[UInt8]] = []
        let rounds: [[[UInt8]]] = [
            [[1, 2, 3], Array(0..<20), []],
            (1...(FileDescriptor.datagramBatch + 3)).map { [UInt8($0), UInt8($0)] },
            [[9]],
        ]
        for sent in rounds {
            Self.send(sent, on: writer)
            received = []
            let end = reader.receiveDatagrams(into: slots) { received.append(Array($0)) }
            #expect(received == sent.map { Array($0.prefix(8)) })
            #expect(end == .drained)
        }
        writer.close()
        var readable = pollfd(fd: reader.rawValue, events: Int16(POLLIN), revents: 0)
        #expect(poll(&readable, 1, 30_000) == 1)
        received = []
        #expect(reader.receiveDatagrams(into: slots) { received.append(Array($0)) } == .hungUp)
        #expect(received.isEmpty)
    }
}
