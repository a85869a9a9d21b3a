import DBus
import Dispatch
import Foundation
import Glibc

/// The app's end of an `AcquireNotify` socket: one datagram per notification or indication,
/// fanned out by bluetoothd to every subscribed central. A full socket is the back-pressure
/// signal Core Bluetooth calls "not ready"; bluetoothd writes a `0x01` byte back for each
/// confirmed indication, and hangs up when the last central unsubscribes or disconnects.
final class NotifyChannel: Sendable {
    /// What one send did.
    enum SendResult: Sendable, Equatable {
        case sent
        case full
        case closed
    }

    /// The MTU bluetoothd was told (the opening central's): values carry at most MTU − 3 bytes.
    let mtu: UInt16
    /// The central whose subscription opened the channel.
    let central: CentralID?
    private let descriptor: FileDescriptor
    private let reader: DatagramReader
    private let pendingReady = PosixMutex<WritableWaiter?>(nil)
    /// The waits for room under way; nil once the channel is closed.
    private let waiters = PosixMutex<Set<WritableWaiter>?>([])
    private static let queue = DispatchQueue(label: "swift-ble.notify-channel")

    /// Makes a socket pair; returns the channel and the end to hand to bluetoothd.
    static func open(
        mtu: UInt16, central: CentralID?, on connection: Connection, confirmed: @escaping @Sendable () -> Void,
        closed: @escaping @Sendable () -> Void
    ) throws(BLEError) -> (NotifyChannel, FileDescriptor) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw BLEError(.failed, message: "socketpair failed: errno \(errno)")
        }
        let ours = FileDescriptor(owning: fds[0])
        let channel = NotifyChannel(
            descriptor: ours, mtu: mtu, central: central, connection: connection, confirmed: confirmed, closed: closed)
        return (channel, FileDescriptor(owning: fds[1]))
    }

    private init(
        descriptor: FileDescriptor, mtu: UInt16, central: CentralID?, connection: Connection,
        confirmed: @escaping @Sendable () -> Void, closed: @escaping @Sendable () -> Void
    ) {
        self.descriptor = descriptor
        self.mtu = mtu
        self.central = central
        reader = DatagramReader(descriptor: descriptor, connection: connection) { bytes in
            for byte in bytes where byte == 0x01 { confirmed() }
        } hangup: {
            closed()
        }
    }

    deinit { close() }

    /// The largest value one notification carries.
    var maximumValueLength: Int { max(0, Int(mtu) - 3) }

    /// Sends one value without waiting.
    func trySend(_ value: Data) -> SendResult {
        while true {
            let fd = descriptor.rawValue
            guard fd >= 0 else { return .closed }
            let sent = value.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            if sent >= 0 { return .sent }
            switch errno {
            case EAGAIN: return .full
            case EINTR: continue
            default: return .closed
            }
        }
    }

    /// Calls `ready` once, when the socket has room again (not when the channel closes first).
    func whenWritable(_ ready: @escaping @Sendable () -> Void) {
        guard let waiter = waiter() else { return }
        // One lock for both: two callers racing would otherwise each leave a wait pending.
        pendingReady.withLock { pending -> WritableWaiter? in
            defer { pending = waiter }
            return pending
        }?.cancel()
        Task { [weak self] in
            await waiter.wait()
            self?.forget(waiter)
            guard let self, self.pendingReady.withLock({ $0 === waiter ? $0.take() : nil }) != nil else { return }
            ready()
        }
    }

    /// Suspends until the socket has room, the channel closes, or the task is cancelled.
    func waitUntilWritable() async {
        guard !Task.isCancelled, let waiter = waiter() else { return }
        await withTaskCancellationHandler {
            await waiter.wait()
        } onCancel: {
            waiter.cancel()
        }
        forget(waiter)
    }

    /// A wait for room on the socket, ended by ``close()`` if nothing ends it first; nil once
    /// the channel is closed. Out of descriptors for its own copy, it ends a few milliseconds
    /// later, so that a sender retries rather than hangs.
    private func waiter() -> WritableWaiter? {
        waiters.withLock { waiters -> WritableWaiter? in
            guard waiters != nil, descriptor.rawValue >= 0 else { return nil }
            let waiter = WritableWaiter(watching: descriptor, queue: Self.queue)
            waiters?.insert(waiter)
            return waiter
        }
    }

    /// A wait that ended.
    private func forget(_ waiter: WritableWaiter) { waiters.withLock { _ = $0?.remove(waiter) } }

    /// Hangs up: bluetoothd sees the channel close.
    func close() {
        pendingReady.withLock { $0 = nil }
        // Each waiter (the pending one among them) watches a copy of the socket, which keeps it
        // open for bluetoothd until the waiter ends.
        for waiter in waiters.withLock({ $0.take() ?? [] }) { waiter.cancel() }
        reader.cancel()
    }
}
