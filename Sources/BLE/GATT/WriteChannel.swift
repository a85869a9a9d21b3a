import BlueZ
import DBus
import Dispatch
import Foundation
import Glibc

/// BlueZ's AcquireWrite: writes without response as datagrams on a socket, one Write Command
/// each, with real flow control: ``write(_:)`` suspends while the socket is full instead of
/// letting BlueZ's queue grow without bound (quirk Q11).
///
/// A write waiting for room ends when the socket takes more, when its task is cancelled, or
/// when the channel closes (``close()``, or BlueZ dropping it), whichever comes first. The
/// socket is watched by one dispatch source, only while someone waits, and closed only once
/// dispatch let go of it, so no source ever watches a number the process has reused.
public final class WriteChannel: Sendable {
    /// The ATT MTU BlueZ reported with the channel.
    public let mtu: UInt16
    private let descriptor: FileDescriptor
    /// Set once in `init`, after the closures that reach the channel exist.
    private let socket = PosixMutex<WatchedSocket?>(nil)
    private let room = PosixMutex(Room())
    private let diagnostics: BLEDiagnostics?

    private typealias Waiter = CheckedContinuation<WriteRoomOutcome, Never>

    /// The waits for room (their rules: `WriteRoomMachine`) and the continuation of each,
    /// under one lock.
    private struct Room {
        var machine = WriteRoomMachine<Waiter>()
        var nextWait: UInt64 = 0
    }

    init(descriptor: FileDescriptor, mtu: UInt16, diagnostics: BLEDiagnostics? = nil) {
        self.descriptor = descriptor
        self.mtu = mtu
        self.diagnostics = diagnostics
        let flags = fcntl(descriptor.rawValue, F_GETFL)
        _ = fcntl(descriptor.rawValue, F_SETFL, flags | O_NONBLOCK)
        let watched = WatchedSocket(
            descriptor, diagnostics: diagnostics, onReadable: {},
            onWritable: { [weak self] in self?.event { $0.roomAvailable() } })
        socket.withLock { $0 = watched }
    }

    deinit { close() }

    /// The largest value one write carries: MTU − 3.
    public var maximumWriteLength: Int { Int(mtu) - 3 }

    /// Sends one write without response; suspends while the socket is full.
    ///
    /// - Throws: ``BLEError/Code/invalidArguments`` for a value longer than
    ///   ``maximumWriteLength`` (never truncated); ``BLEError/Code/disconnected`` once BlueZ
    ///   closed the channel (link lost) or ``close()`` was called; ``BLEError/Code/cancelled``
    ///   when the task is cancelled, also while it waits for room.
    public func write(_ value: Data) async throws(BLEError) {
        guard value.count <= maximumWriteLength else {
            throw BLEError(
                .invalidArguments, message: "\(value.count) bytes exceed the \(maximumWriteLength)-byte channel limit")
        }
        while true {
            if Task.isCancelled { throw BLEError.cancelledByTask }
            // Closed by its owner: the socket itself closes once dispatch let go of it.
            if room.withLock({ $0.machine.closed }) {
                throw BLEError(.disconnected, message: "the write channel is closed")
            }
            // Sent while the number cannot be closed (and reused) under the call: the send
            // does not block.
            let (sent, error) = descriptor.withRawValue { fd -> (Int, Int32) in
                guard fd >= 0 else { return (-1, EBADF) }
                let flags = Int32(MSG_DONTWAIT | MSG_NOSIGNAL)
                let sent = value.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, flags) }
                return (sent, sent < 0 ? errno : 0)
            }
            if sent >= 0 { return }
            switch error {
            case EAGAIN:
                switch await waitForRoom() {
                case .room: continue
                case .cancelled: throw BLEError.cancelledByTask
                case .closed: throw BLEError(.disconnected, message: "the write channel is closed")
                }
            case EINTR:
                continue
            case EBADF:
                throw BLEError(.disconnected, message: "the write channel is closed")
            default:
                throw BLEError(.disconnected, message: "the write channel closed (errno \(error))")
            }
        }
    }

    /// Releases the channel (BlueZ sees the socket close); writes waiting for room end with
    /// ``BLEError/Code/disconnected``.
    public func close() {
        event { $0.close() }
    }

    private func waitForRoom() async -> WriteRoomOutcome {
        let id = room.withLock { room in
            defer { room.nextWait += 1 }
            return room.nextWait
        }
        let site = diagnostics.willSuspend()
        defer { diagnostics.didResume(site) }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Waiter) in
                event { $0.wait(id, continuation) }
            }
        } onCancel: {
            event { $0.cancel(id) }
        }
        room.withLock { $0.machine.finished(id) }
        return outcome
    }

    /// Feeds the machine one event and runs its actions after its lock is released.
    private func event(_ body: (inout WriteRoomMachine<Waiter>) -> [WriteRoomMachine<Waiter>.Action]) {
        let actions = room.withLock { body(&$0.machine) }
        for action in actions {
            switch action {
            case .resume(let waiter, let outcome): waiter.resume(returning: outcome)
            case .watch(let on): socket.withLock { $0 }?.watchWritable(on)
            case .release: socket.withLock { $0 }?.cancel()
            }
        }
    }
}

extension Characteristic {
    /// Acquires the characteristic's write-without-response channel (BlueZ's AcquireWrite).
    /// While it is open, D-Bus writes to the characteristic fail with ``BLEError/Code/notPermitted``.
    public func openWriteChannel() async throws(BLEError) -> WriteChannel {
        try await peripheral.acquireWrite(path)
    }
}

extension Peripheral {
    func acquireWrite(_ path: ObjectPath) async throws(BLEError) -> WriteChannel {
        let reply = try await perform(
            GattCall(
                path: path, interface: BlueZInterface.gattCharacteristic1, member: BlueZMethod.acquireWrite,
                arguments: [.dictionary(key: .string, value: .variant, [])]))
        guard reply.body.count == 2, case .unixFD(let descriptor) = reply.body[0], case .uint16(let mtu) = reply.body[1]
        else { throw BLEError(.protocolError, message: "AcquireWrite replied (\(reply.signature)), not (hq)") }
        return WriteChannel(descriptor: descriptor, mtu: mtu, diagnostics: session.diagnostics)
    }
}
