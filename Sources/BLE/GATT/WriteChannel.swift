import BlueZ
import DBus
import Dispatch
import Foundation
import Glibc

/// BlueZ's AcquireWrite: writes without response as datagrams on a socket, one Write Command
/// each, with real flow control: ``write(_:)`` suspends while the socket is full instead of
/// letting BlueZ's queue grow without bound (quirk Q11).
public final class WriteChannel: Sendable {
    /// The ATT MTU BlueZ reported with the channel.
    public let mtu: UInt16
    private let descriptor: FileDescriptor
    private static let queue = DispatchQueue(label: "swift-ble.write-channel")
    private let diagnostics: BLEDiagnostics?

    init(descriptor: FileDescriptor, mtu: UInt16, diagnostics: BLEDiagnostics? = nil) {
        self.descriptor = descriptor
        self.mtu = mtu
        self.diagnostics = diagnostics
        let flags = fcntl(descriptor.rawValue, F_GETFL)
        _ = fcntl(descriptor.rawValue, F_SETFL, flags | O_NONBLOCK)
    }

    deinit { descriptor.close() }

    /// The largest value one write carries: MTU − 3.
    public var maximumWriteLength: Int { Int(mtu) - 3 }

    /// Sends one write without response; suspends while the socket is full.
    ///
    /// - Throws: ``BLEError/Code/invalidArguments`` for a value longer than
    ///   ``maximumWriteLength`` (never truncated); ``BLEError/Code/disconnected`` once BlueZ
    ///   closed the channel (link lost); ``BLEError/Code/cancelled`` when the task is cancelled.
    public func write(_ value: Data) async throws(BLEError) {
        guard value.count <= maximumWriteLength else {
            throw BLEError(
                .invalidArguments, message: "\(value.count) bytes exceed the \(maximumWriteLength)-byte channel limit")
        }
        while true {
            if Task.isCancelled { throw BLEError.cancelledByTask }
            let fd = descriptor.rawValue
            guard fd >= 0 else { throw BLEError(.disconnected, message: "the write channel is closed") }
            let sent = value.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            if sent >= 0 { return }
            switch errno {
            case EAGAIN:
                await waitUntilWritable(fd)
            case EINTR:
                continue
            default:
                throw BLEError(.disconnected, message: "the write channel closed (errno \(errno))")
            }
        }
    }

    /// Releases the channel (BlueZ sees the socket close).
    public func close() { descriptor.close() }

    private func waitUntilWritable(_ fd: Int32) async {
        let site = diagnostics.willSuspend()
        defer { diagnostics.didResume(site) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: Self.queue)
            let resumed = PosixMutex(false)
            source.setEventHandler {
                guard
                    !resumed.withLock({ done in
                        defer { done = true }
                        return done
                    })
                else { return }
                source.cancel()
                continuation.resume()
            }
            source.resume()
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
