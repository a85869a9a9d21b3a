import BlueZ
import DBus
import Foundation
import Glibc

/// The simulator's end of a channel: a blocking `SOCK_SEQPACKET` Unix socket served by a
/// thread of its own (the simulator may block a thread per channel; the SDK may not). It runs
/// a peripheral's ``VirtualL2CAPServer/Behavior``, or feeds a test's ``SimulatedL2CAPChannel``.
final class SimulatedL2CAPEnd: Sendable {
    let descriptor: FileDescriptor
    /// The adapter and the peer this channel runs between, to hang it up with its link.
    let adapter: BluetoothAddress
    let peer: BluetoothAddress

    init(descriptor: FileDescriptor, adapter: BluetoothAddress, peer: BluetoothAddress) {
        self.descriptor = descriptor
        self.adapter = adapter
        self.peer = peer
    }

    /// Ends the channel as a dropped link does: both sides read end of file.
    func hangUp() {
        _ = shutdown(descriptor.rawValue, Int32(SHUT_RDWR))
    }

    /// Reads SDUs until end of file, on a thread of its own, then calls `ended`.
    func serve(
        mtu: Int, gate: L2CAPReadGate, _ received: @escaping @Sendable (Data, SimulatedL2CAPEnd) -> Void,
        ended: @escaping @Sendable () -> Void
    ) {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: max(mtu, 1) + 1)
            var resetSeen = false
            while true {
                gate.waitWhileHeld()
                let count = buffer.withUnsafeMutableBytes { recv(descriptor.rawValue, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                // A central that closed with our SDUs unread leaves a reset, reported once and
                // before the SDUs it sent last: a peer receives those, so they are read on.
                if count < 0 && errno == ECONNRESET && !resetSeen {
                    resetSeen = true
                    continue
                }
                guard count > 0 || (count == 0 && !FileDescriptor.reportsHangUp(descriptor.rawValue)) else { break }
                received(Data(buffer[0..<count]), self)
            }
            hangUp()
            ended()
        }
        thread.name = "ble-sim l2cap"
        thread.start()
    }

    /// Sends one SDU, blocking while the other side does not read.
    @discardableResult
    func send(_ sdu: Data) -> Bool {
        sdu.withUnsafeBytes { raw in
            while true {
                let sent = Glibc.send(descriptor.rawValue, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
                if sent < 0 && errno == EINTR { continue }
                return sent == raw.count
            }
        }
    }
}

/// Holds the simulator's L2CAP readers (``Simulator/holdL2CAPReads(_:)``): a peer that stops
/// reading, so that the SDK's sends meet back-pressure.
final class L2CAPReadGate: Sendable {
    private let condition = PosixMutex(false)
    private let signal = NSCondition()

    func set(held: Bool) {
        signal.lock()
        condition.withLock { $0 = held }
        signal.broadcast()
        signal.unlock()
    }

    func waitWhileHeld() {
        signal.lock()
        while condition.withLock({ $0 }) { signal.wait() }
        signal.unlock()
    }
}

/// Makes a connected pair of `SOCK_SEQPACKET` Unix sockets: the one kind of socket besides
/// L2CAP's that keeps SDU boundaries and blocks a sender while the receiver is full.
enum SocketPair {
    static func make() throws(L2CAPTransportError) -> (sdk: FileDescriptor, simulator: FileDescriptor) {
        var pair: [Int32] = [-1, -1]
        let made = socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue | SOCK_CLOEXEC.rawValue), 0, &pair)
        guard made == 0 else { throw L2CAPTransportError(errno: errno, during: "making a socket pair") }
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
        return (FileDescriptor(owning: pair[0]), FileDescriptor(owning: pair[1]))
    }
}
