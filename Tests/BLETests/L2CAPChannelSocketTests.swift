import BlueZ
import DBus
import Foundation
import Testing

@testable import BLE

/// ``L2CAPChannelCore`` on one end of a `SOCK_SEQPACKET` socket pair the test holds the
/// other end of: the shell's socket path, with the interleaving set up before the channel
/// starts watching its socket.
@Suite("L2CAP channel socket path", .timeLimit(.minutes(1)))
struct L2CAPChannelSocketTests {
    /// A connected pair: the channel's end (non-blocking) and the peer's.
    static func pair() throws -> (channel: FileDescriptor, peer: Int32) {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue | SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw BLEError(.failed, message: "socketpair failed: errno \(errno)")
        }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        return (FileDescriptor(owning: ends[0]), ends[1])
    }

    /// The peer sent more than the channel buffers and hung up before the channel watched its
    /// socket: the one readiness event (EPOLLHUP, after which libdispatch watches the socket
    /// no more) is spent on the read that fills the buffer and pauses reading. Resuming must
    /// read the rest itself; waiting for readiness again, the reader waited forever (the
    /// time limit fails this test) with the rest of the SDUs left in the socket.
    @Test("a peer that hung up with more queued than the reader's buffer: every SDU is read, then the end")
    func hangUpBeyondTheBuffer() async throws {
        let (descriptor, peer) = try Self.pair()
        let count = 20
        for index in 0..<count {
            var byte = UInt8(index)
            #expect(send(peer, &byte, 1, 0) == 1)
        }
        close(peer)
        let peerAddress = L2CAPEndpoint(address: try BluetoothAddress("00:11:22:33:44:55"))
        let socket = L2CAPSocket(descriptor: descriptor, psm: 0x0080, peer: peerAddress, sendMTU: 64, receiveMTU: 64)
        let core = L2CAPChannelCore(socket, bufferLimit: 2, describe: "test channel", diagnostics: nil)
        var received: [UInt8] = []
        while let sdu = await core.next() { received.append(contentsOf: sdu) }
        #expect(received == (0..<count).map { UInt8($0) })
        #expect(core.endError?.code == .disconnected)
    }

    /// Fills the channel's end until the socket takes no more (the peer reads nothing).
    static func fill(_ descriptor: FileDescriptor) {
        var sdu = [UInt8](repeating: 0xAB, count: 64)
        while Glibc.send(descriptor.rawValue, &sdu, sdu.count, Int32(MSG_DONTWAIT)) > 0 {}
    }

    /// A send waiting for room when the peer hangs up fails at once, typed, whether the channel
    /// still watches for incoming data or has paused reading (its buffer full): a hang-up
    /// seen by neither watch would leave the send waiting until its deadline, ten minutes
    /// here (the suite's time limit fails it first).
    @Test(
        "a send waiting for room fails as disconnected when the peer hangs up, reading paused or not",
        arguments: [false, true])
    func hangUpWhileASendWaits(readingPaused: Bool) async throws {
        let (descriptor, peer) = try Self.pair()
        if readingPaused {
            // More than the buffer holds, unread: the channel stops reading its socket.
            for index in 0..<5 {
                var byte = UInt8(index)
                #expect(send(peer, &byte, 1, 0) == 1)
            }
        }
        Self.fill(descriptor)
        let peerAddress = L2CAPEndpoint(address: try BluetoothAddress("00:11:22:33:44:55"))
        let socket = L2CAPSocket(descriptor: descriptor, psm: 0x0080, peer: peerAddress, sendMTU: 64, receiveMTU: 64)
        let core = L2CAPChannelCore(socket, bufferLimit: 2, describe: "test channel", diagnostics: nil)
        let waiting = Task {
            try await core.send(Data(repeating: 1, count: 8), deadline: .now + .seconds(600))
        }
        // The send is queued behind a full socket before the peer goes; either order of the
        // two must end it, so no wait is needed for it to be parked first.
        close(peer)
        let outcome = await waiting.result
        #expect(throws: BLEError.self) { try outcome.get() }
        if case .failure(let error as BLEError) = outcome { #expect(error.code == .disconnected) }
        if readingPaused {
            // What arrived before the hang-up is still read, then the end.
            var received: [UInt8] = []
            while let sdu = await core.next() { received.append(contentsOf: sdu) }
            #expect(received == [0, 1, 2, 3, 4], "\(String(describing: core.endError))")
        }
    }
}
