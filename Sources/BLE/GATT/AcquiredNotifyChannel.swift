import DBus
import Dispatch
import Foundation
import Glibc

/// BlueZ's AcquireNotify fast path: notifications arrive as datagrams on a socket instead of
/// D-Bus signals, each read straight into the subscribers' buffers. No read echo exists on
/// this path, and the `Value` property is not updated (bluez-dbus-api.md §4.4).
///
/// The subscribers outlive the socket: BlueZ hangs it up when the link drops, and the
/// peripheral acquires a new one after reconnecting (``attach(_:)``).
final class AcquiredNotifyChannel: Sendable {
    private struct State {
        var subscribers: [UInt64: NotificationSubscriber] = [:]
        var reader: DatagramReader?
        var finished = false
    }

    private let state = PosixMutex(State())

    var isEmpty: Bool { state.withLock { $0.subscribers.isEmpty } }
    var isAttached: Bool { state.withLock { $0.reader != nil } }

    func add(_ subscriber: NotificationSubscriber) {
        let finished = state.withLock { state -> Bool in
            if !state.finished { state.subscribers[subscriber.id] = subscriber }
            return state.finished
        }
        if finished { subscriber.continuation.finish() }
    }

    /// Removes a subscriber; returns whether none is left.
    func remove(_ id: UInt64) -> Bool {
        state.withLock { state in
            state.subscribers[id] = nil
            return state.subscribers.isEmpty
        }
    }

    /// Starts reading a freshly acquired socket.
    func attach(_ descriptor: FileDescriptor) {
        let reader = DatagramReader(descriptor: descriptor) { [weak self] value in
            let subscribers = self?.state.withLock { Array($0.subscribers.values) } ?? []
            for subscriber in subscribers { subscriber.deliver(value) }
        } hangup: { [weak self] in
            self?.detach()
        }
        let old = state.withLock { state -> DatagramReader? in
            defer { state.reader = reader }
            return state.reader
        }
        old?.cancel()
    }

    /// Closes the socket (BlueZ then releases the acquisition); subscribers stay.
    func detach() {
        state.withLock { state -> DatagramReader? in
            defer { state.reader = nil }
            return state.reader
        }?.cancel()
    }

    /// Closes the socket and ends every iteration.
    func finish() {
        let (reader, subscribers) = state.withLock { state -> (DatagramReader?, [NotificationSubscriber]) in
            state.finished = true
            defer {
                state.reader = nil
                state.subscribers.removeAll()
            }
            return (state.reader, Array(state.subscribers.values))
        }
        reader?.cancel()
        for subscriber in subscribers { subscriber.continuation.finish() }
    }
}

/// Reads datagrams from a non-blocking socket on a dispatch queue.
final class DatagramReader: Sendable {
    private let descriptor: FileDescriptor
    /// Dispatch sources are not Sendable; the lock makes cancelling from any thread safe.
    private let source: PosixMutex<(any DispatchSourceRead)?>
    private static let queue = DispatchQueue(label: "swift-ble.datagrams")

    init(
        descriptor: FileDescriptor, received: @escaping @Sendable (Data) -> Void,
        hangup: @escaping @Sendable () -> Void
    ) {
        self.descriptor = descriptor
        let flags = fcntl(descriptor.rawValue, F_GETFL)
        _ = fcntl(descriptor.rawValue, F_SETFL, flags | O_NONBLOCK)
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor.rawValue, queue: Self.queue)
        source.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = recv(descriptor.rawValue, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if count > 0 || (count == 0 && !Self.hungUp(descriptor.rawValue)) {
                    received(Data(buffer[0..<count]))
                    continue
                }
                if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
                source.cancel()
                hangup()
                return
            }
        }
        source.setCancelHandler { descriptor.close() }
        source.resume()
        self.source = PosixMutex(source)
    }

    func cancel() { source.withLock { $0?.cancel() } }

    /// On SEQPACKET an empty datagram is a valid (empty) notification; EOF shows as HUP.
    private static func hungUp(_ fd: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&poller, 1, 0)
        return poller.revents & Int16(POLLHUP) != 0
    }
}
