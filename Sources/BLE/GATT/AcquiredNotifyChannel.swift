import DBus
import Foundation
import Glibc
import Synchronization

/// BlueZ's AcquireNotify fast path: notifications arrive as datagrams on a socket instead of
/// D-Bus signals, each read straight into the subscribers' buffers. No read echo exists on
/// this path, and the `Value` property is not updated (bluez-dbus-api.md §4.4).
///
/// The subscribers outlive the socket: BlueZ hangs it up when the link drops, and the
/// peripheral acquires a new one after reconnecting (``attach(_:on:)``).
final class AcquiredNotifyChannel: Sendable {
    /// Where a datagram goes: the subscribers, under a lock of their own.
    private let fanout = Fanout()
    /// The socket's reader. Kept here, not in ``fanout``, which the reader's callback holds:
    /// a channel let go without ``finish()`` (its peripheral gone) releases its reader, whose
    /// release closes the socket.
    private let reader = PosixMutex<DatagramReader?>(nil)
    private let path: ObjectPath
    /// Keeps the characteristic's last value (datagrams bypass the GATT client's signals): it
    /// takes this channel's newest datagram when it needs it (``GattClient/settleAcquired(_:)``).
    private let client: GattClient

    init(path: ObjectPath, client: GattClient) {
        self.path = path
        self.client = client
        client.addAcquiredChannel(self, for: path)
    }

    var isEmpty: Bool { fanout.state.withLock { $0.subscribers.isEmpty } }
    var isAttached: Bool { reader.withLock { $0 != nil } }

    func add(_ subscriber: NotificationSubscriber) {
        let finished = fanout.state.withLock { state -> Bool in
            if !state.finished { state.subscribers[subscriber.id] = subscriber }
            return state.finished
        }
        if finished { subscriber.buffer.finish() }
    }

    /// Removes a subscriber; returns whether none is left.
    func remove(_ id: UInt64) -> Bool {
        fanout.state.withLock { state in
            state.subscribers[id] = nil
            return state.subscribers.isEmpty
        }
    }

    /// Starts reading a freshly acquired socket, on `connection`'s I/O thread.
    func attach(_ descriptor: FileDescriptor, on connection: Connection) {
        // The fan-out is held strongly: a weak reference would be loaded, under a run-time
        // exclusivity check, for every datagram.
        let fanout = self.fanout
        let reader = DatagramReader(descriptor: descriptor, connection: connection) { value in
            fanout.deliver(value)
        } hangup: { [weak self] in
            self?.detach()
        }
        let old = self.reader.withLock { slot -> DatagramReader? in
            defer { slot = reader }
            return slot
        }
        old?.cancel()
    }

    /// Hands the newest datagram not yet noted to `note`, under the fan-out's lock: a datagram
    /// that arrives meanwhile waits, and is noted after it.
    func noteNewest(_ note: (Data) -> Void) {
        fanout.state.withLock { state in
            guard let value = state.unnoted else { return }
            state.unnoted = nil
            note(value)
        }
    }

    /// Closes the socket (BlueZ then releases the acquisition); subscribers stay.
    func detach() {
        reader.withLock { $0.take() }?.cancel()
    }

    /// Closes the socket and ends every iteration.
    func finish() {
        let subscribers = fanout.state.withLock { state -> [NotificationSubscriber] in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        detach()
        for subscriber in subscribers { subscriber.buffer.finish() }
        client.removeAcquiredChannel(self, for: path)
    }

    /// The subscribers, and the newest datagram until the client notes it.
    private final class Fanout: Sendable {
        struct State {
            var subscribers: [UInt64: NotificationSubscriber] = [:] {
                didSet { delivery = Array(subscribers.values) }
            }
            /// The subscribers as an array, kept with them: handed out per datagram as it is.
            var delivery: [NotificationSubscriber] = []
            var finished = false
            /// The newest datagram, until the client notes it as the characteristic's last
            /// value (``AcquiredNotifyChannel/noteNewest(_:)``).
            var unnoted: Data?
        }

        let state = PosixMutex(State())

        func deliver(_ value: Data) {
            let subscribers = state.withLock { state in
                state.unnoted = value
                return state.delivery
            }
            for subscriber in subscribers { subscriber.deliver(value) }
        }
    }
}

/// Reads datagrams from a non-blocking socket on the bus connection's I/O thread, where the
/// notification iterations it feeds usually run: a datagram reaches them with no other thread
/// woken. (A dispatch thread of its own costs a context switch or two per datagram and loses
/// no less in a burst: the simulator drops the first burst after it starts either way.)
final class DatagramReader: Sendable {
    private let descriptor: FileDescriptor
    private let connection: Connection
    private let stopped = StopFlag()

    init(
        descriptor: FileDescriptor, connection: Connection, received: @escaping @Sendable (Data) -> Void,
        hangup: @escaping @Sendable () -> Void
    ) {
        self.descriptor = descriptor
        self.connection = connection
        let flags = fcntl(descriptor.rawValue, F_GETFL)
        _ = fcntl(descriptor.rawValue, F_SETFL, flags | O_NONBLOCK)
        let stopped = self.stopped
        // A datagram is one ATT value: at most 512 bytes (Core Specification, Vol 3, Part F,
        // 3.2.9), well inside a slot. The loop reads a burst's datagrams with one system call,
        // into slots it keeps: nothing is allocated, set up or locked per wake-up.
        let watching = connection.addDatagramReader(
            descriptor, slotSize: Self.slotSize,
            onDatagram: { bytes in
                // Stopped: the loop may read once more before the removal reaches it.
                guard !stopped.isSet else { return }
                // From the address: `Data(bytes)` goes through a generic collection initialiser
                // that looks up metadata for every datagram.
                guard let start = bytes.baseAddress, !bytes.isEmpty else { return received(Data()) }
                received(Data(bytes: start, count: bytes.count))
            },
            onEnd: { _ in
                guard stopped.set() else { return }
                connection.removeReader(descriptor) { descriptor.close() }
                hangup()
            })
        if !watching, stopped.set() { descriptor.close() }
    }

    /// A reader nobody holds stops: the loop keeps only what reading needs, not the reader.
    deinit { cancel() }

    /// Stops reading and closes the socket (BlueZ sees the hang-up and releases the acquisition).
    func cancel() {
        guard stopped.set() else { return }
        let descriptor = self.descriptor
        connection.removeReader(descriptor) { descriptor.close() }
    }

    /// Room for one datagram.
    private static let slotSize = 4_096
}
