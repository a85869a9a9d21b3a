import DBus
import Foundation
import Testing

@testable import BLE

/// ``WriteChannel`` on one end of a `SOCK_SEQPACKET` socket pair whose other end the test
/// holds (as bluetoothd holds an AcquireWrite socket's): a write waiting for a full socket ends
/// on room, cancellation, close or hang-up, and the channel's socket is closed in the end.
@Suite("Write channel socket path", .timeLimit(.minutes(1)))
struct WriteChannelSocketTests {
    /// A channel on a full socket, the peer's end, and the diagnostics that count its waits.
    static func fullChannel() throws -> (channel: WriteChannel, peer: Int32, diagnostics: BLEDiagnostics) {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue | SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw BLEError(.failed, message: "socketpair failed: errno \(errno)")
        }
        var filler = [UInt8](repeating: 0xEE, count: 20)
        while send(ends[0], &filler, filler.count, Int32(MSG_DONTWAIT)) > 0 {}
        let diagnostics = BLEDiagnostics(bus: nil, connectionName: nil)
        let channel = WriteChannel(descriptor: FileDescriptor(owning: ends[0]), mtu: 23, diagnostics: diagnostics)
        return (channel, ends[1], diagnostics)
    }

    /// What the peer reads next without waiting: a datagram, `.empty` when none is there yet,
    /// or `.end` once the channel's end closed. Never blocks: a test that blocked a thread of
    /// the cooperative pool could starve the very task it waits for.
    enum Received: Equatable {
        case datagram([UInt8])
        case empty
        case end
    }

    static func receive(_ peer: Int32) -> Received {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = recv(peer, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        if count > 0 { return .datagram(Array(buffer[..<count])) }
        return count == 0 ? .end : .empty
    }

    /// Reads every datagram the peer can read now (the filler).
    static func drain(_ peer: Int32) -> [[UInt8]] {
        var received: [[UInt8]] = []
        while case .datagram(let datagram) = receive(peer) { received.append(datagram) }
        return received
    }

    /// The next datagram or end, waiting for it between checks.
    static func next(_ peer: Int32) async throws -> Received {
        var received = Received.empty
        try await eventually("the peer received something") {
            received = receive(peer)
            return received != .empty
        }
        return received
    }

    /// Starts `write` of `value` and returns once it waits for room.
    static func waitingWrite(
        _ channel: WriteChannel, _ value: [UInt8], _ diagnostics: BLEDiagnostics
    ) async throws -> Task<Result<Void, BLEError>, Never> {
        let task = Task { () -> Result<Void, BLEError> in
            do throws(BLEError) {
                try await channel.write(Data(value))
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try await eventually("the write waits for room") { diagnostics.continuationsCreated == 1 }
        return task
    }

    @Test("a write on a full socket goes out once the peer reads; the socket closes with the channel")
    func roomLetsTheWriteThrough() async throws {
        let (channel, peer, diagnostics) = try Self.fullChannel()
        defer { close(peer) }
        let write = try await Self.waitingWrite(channel, [1, 2, 3], diagnostics)
        // The write may go out while the peer drains: read again once it returned.
        var received = Self.drain(peer)
        #expect(try await write.value.get() == ())
        received += Self.drain(peer)
        #expect(received.last == [1, 2, 3], "the write went out, after everything queued before it")
        let filler = received.dropLast()
        #expect(!filler.isEmpty && filler.allSatisfy { $0 == [UInt8](repeating: 0xEE, count: 20) })
        channel.close()
        try await eventually("the socket closed") { diagnostics.socketsClosed == 1 }
        #expect(try await Self.next(peer) == .end, "the peer sees the end")
        #expect(diagnostics.outstanding == 0, "\(diagnostics.summary)")
    }

    @Test("a write waiting for room is cancelled at once; the channel writes on")
    func cancellationWhileWaiting() async throws {
        let (channel, peer, diagnostics) = try Self.fullChannel()
        defer { close(peer) }
        let write = try await Self.waitingWrite(channel, [1], diagnostics)
        write.cancel()
        #expect(await write.value.failure?.code == .cancelled)
        #expect(Self.drain(peer).allSatisfy { $0.count == 20 }, "the cancelled write never went out")
        try await channel.write(Data([2]))
        #expect(try await Self.next(peer) == .datagram([2]))
        channel.close()
        try await eventually("the socket closed") { diagnostics.socketsClosed == 1 }
        #expect(diagnostics.outstanding == 0, "\(diagnostics.summary)")
    }

    @Test("closing the channel ends a write waiting for room, and every write after, as disconnected")
    func closeWhileWaiting() async throws {
        let (channel, peer, diagnostics) = try Self.fullChannel()
        defer { close(peer) }
        let write = try await Self.waitingWrite(channel, [1], diagnostics)
        channel.close()
        #expect(await write.value.failure?.code == .disconnected)
        let after = await #expect(throws: BLEError.self) { try await channel.write(Data([2])) }
        #expect(after?.code == .disconnected)
        try await eventually("the socket closed") { diagnostics.socketsClosed == 1 }
        #expect(diagnostics.outstanding == 0, "\(diagnostics.summary)")
    }

    @Test("the peer hanging up ends a write waiting for room as disconnected")
    func hangUpWhileWaiting() async throws {
        let (channel, peer, diagnostics) = try Self.fullChannel()
        let write = try await Self.waitingWrite(channel, [1], diagnostics)
        close(peer)
        #expect(await write.value.failure?.code == .disconnected)
        channel.close()
        try await eventually("the socket closed") { diagnostics.socketsClosed == 1 }
        #expect(diagnostics.outstanding == 0, "\(diagnostics.summary)")
    }
}

extension Result {
    /// The error, if this is a failure.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
