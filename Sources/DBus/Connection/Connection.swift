import Foundation

/// A connection to a D-Bus message bus.
///
/// One dedicated thread owns the libdbus connection and does all its I/O; every method here
/// hands work to that thread and, where it waits, suspends the calling task until the reply,
/// an error, the deadline, cancellation or the end of the connection, whichever comes first.
///
/// ```swift
/// let bus = try await Connection(bus: .system)
/// let reply = try await bus.call(
///     destination: "org.bluez", path: "/", interface: .objectManager, member: "GetManagedObjects")
/// ```
public final class Connection: Sendable {
    /// Which bus to connect to.
    public enum Bus: Sendable, Hashable, CustomStringConvertible {
        /// The system bus (honours `DBUS_SYSTEM_BUS_ADDRESS`).
        case system
        /// The session bus (honours `DBUS_SESSION_BUS_ADDRESS`).
        case session
        /// A bus at a D-Bus server address such as `unix:path=/tmp/bus`.
        case address(String)

        /// A short, human-readable form.
        public var description: String {
            switch self {
            case .system: "the system bus"
            case .session: "the session bus"
            case .address(let address): address
            }
        }
    }

    let core: ConnectionCore
    /// The I/O thread as an executor; see ``ConnectionExecutor``.
    public let executor: ConnectionExecutor
    /// The unique name the bus gave this connection, e.g. `:1.42` (a new one each time it
    /// reconnects, see ``ConnectionOptions/reconnection``).
    public var uniqueName: BusName { core.link.withLock { $0.name } }
    /// The options the connection was opened with.
    public var options: ConnectionOptions { core.options }
    /// Continuation accounting: every suspended call is counted in and out.
    public var counters: ConnectionCounters { core.counters }

    /// Connects and registers with the bus; the I/O thread starts here and ends with ``close()``.
    public init(bus: Bus, options: ConnectionOptions = ConnectionOptions()) async throws(DBusError) {
        let core = try ConnectionCore(options: options)
        let executor = ConnectionExecutor(core: core)
        let opened: Result<BusName, DBusError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                IOLoop.run(core: core, executor: executor, bus: bus) { continuation.resume(returning: $0) }
            }
            thread.name = "dbus-io"
            thread.start()
        }
        self.core = core
        self.executor = executor
        _ = try opened.get()
    }

    /// Runs `handler` on the I/O thread, with the new unique name, each time the connection is
    /// on the bus again after losing it (``ConnectionOptions/reconnection``). It must not block.
    public func whenReopened(_ handler: @escaping @Sendable (BusName) -> Void) {
        core.reopenHandlers.withLock { $0.append(handler) }
    }

    /// Whether the connection is on a bus now: false once closed, and while it is between
    /// buses waiting to reconnect.
    public var isConnected: Bool { !core.isClosed && !core.link.withLock { $0.detached } }

    deinit { close() }

    /// Closes the connection: pending calls fail with ``DBusError/Code/disconnected``,
    /// subscriptions end, the I/O thread exits. Safe to call more than once.
    public func close() {
        core.enqueueFinal { loop in
            loop.markClosed(reason: DBusError(.disconnected, message: "the connection was closed"))
        }
    }

    /// Whether the connection has been closed or lost.
    public var isClosed: Bool { core.isClosed }

    // MARK: Calls

    /// Calls a method and waits for its reply.
    ///
    /// - Returns: the method-return message (read its ``DBusMessage/body``).
    /// - Throws: ``DBusError`` with code ``DBusError/Code/remote`` and the error's name for an
    ///   error reply, ``DBusError/Code/timeout`` past the deadline, ``DBusError/Code/cancelled``
    ///   when the task is cancelled, ``DBusError/Code/disconnected`` when the connection ends.
    public func call(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        arguments: [DBusValue] = [], timeout: Duration? = nil
    ) async throws(DBusError) -> DBusMessage {
        let message = DBusMessage(
            kind: .methodCall, path: path, interface: interface, member: member, destination: destination,
            body: arguments)
        return try await call(message, deadline: MonotonicClock.deadline(after: timeout ?? options.defaultTimeout))
    }

    /// Sends a prepared method-call message and waits for its reply until `timeout`.
    public func call(_ message: DBusMessage, timeout: Duration? = nil) async throws(DBusError) -> DBusMessage {
        try await call(message, deadline: MonotonicClock.deadline(after: timeout ?? options.defaultTimeout))
    }

    func call(_ message: DBusMessage, deadline: UInt64) async throws(DBusError) -> DBusMessage {
        guard message.kind == .methodCall else {
            throw DBusError(.invalidValue, message: "only method calls have replies")
        }
        if Task.isCancelled { throw DBusError(.cancelled, message: "the task was cancelled") }
        let core = self.core
        let id = core.makeID()
        let slot = CallSlot(counters: core.counters)
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                slot.register(continuation)
                let accepted = core.runOrEnqueue { loop in
                    loop.startCall(id, message, deadline: deadline, completion: .slot(slot))
                }
                if !accepted { slot.finish(.failure(DBusError(.disconnected, message: "the connection is closed"))) }
            }
        } onCancel: {
            if slot.finish(.failure(DBusError(.cancelled, message: "the task was cancelled"))) {
                core.runOrEnqueue { loop in loop.cancelCall(id) }
            }
        }
        slot.synchronize()
        return try result.get()
    }

    /// Sends a method call and hands its outcome to `completion`, on the I/O thread, exactly
    /// once: the reply, an error reply, the deadline passing, or the connection ending. Nothing
    /// suspends, so a caller that keeps its own waiters (a queue of operations, say) resumes
    /// them from there with no task in between. `completion` must not block.
    ///
    /// Invalid messages and a closed connection are reported through `completion` too.
    public func startCall(
        _ message: DBusMessage, timeout: Duration? = nil,
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        guard message.kind == .methodCall else {
            completion(.failure(DBusError(.invalidValue, message: "only method calls have replies")))
            return
        }
        let deadline = MonotonicClock.deadline(after: timeout ?? options.defaultTimeout)
        let core = self.core
        let id = core.makeID()
        if let loop = core.loopForDirectWork() {
            return loop.startCall(id, message, deadline: deadline, completion: .onLoop(completion))
        }
        let accepted = core.enqueue { loop in
            loop.startCall(id, message, deadline: deadline, completion: .onLoop(completion))
        }
        if !accepted { completion(.failure(DBusError(.disconnected, message: "the connection is closed"))) }
    }

    /// Calls `onReadable` on the I/O thread, with the poll events seen (`POLLIN`, `POLLHUP`,
    /// …), whenever `descriptor` is readable, until ``removeReader(_:then:)``: a socket read on
    /// the thread that also runs this connection's tasks, so what it hands to them wakes no
    /// other thread. The loop waits level-triggered: `onReadable` reads until it would block.
    /// It must not block. Returns false when the connection is closed.
    @discardableResult
    public func addReader(_ descriptor: FileDescriptor, onReadable: @escaping @Sendable (Int16) -> Void) -> Bool {
        let fd = descriptor.rawValue
        return core.enqueue { loop in loop.addReader(fd, .events(onReadable)) }
    }

    /// Reads the datagrams of `descriptor` (a non-blocking `SOCK_SEQPACKET` or `SOCK_DGRAM`
    /// socket) on the I/O thread whenever it is readable, until ``removeReader(_:then:)``: each
    /// goes to `onDatagram` in order, cut to `slotSize` bytes and valid only during the call;
    /// a read that meets the peer's hang-up or a failure calls `onEnd` after what came before
    /// it (and again at each wake-up until the reader is removed). The loop reads into slots
    /// of its own, made once and shared by its datagram readers, which only its thread fills:
    /// nothing is allocated or locked per read. Returns false when the connection is closed.
    @discardableResult
    public func addDatagramReader(
        _ descriptor: FileDescriptor, slotSize: Int,
        onDatagram: @escaping @Sendable (UnsafeRawBufferPointer) -> Void,
        onEnd: @escaping @Sendable (FileDescriptor.DatagramReadEnd) -> Void
    ) -> Bool {
        let fd = descriptor.rawValue
        let reading = DatagramReading(
            descriptor: descriptor, slotSize: slotSize, onDatagram: onDatagram, onEnd: onEnd)
        return core.enqueue { loop in loop.addReader(fd, .datagrams(reading)) }
    }

    /// Stops watching `descriptor`, then runs `then` on the I/O thread (where closing it is
    /// safe: the loop no longer watches its number). On a closed connection `then` runs at once.
    public func removeReader(_ descriptor: FileDescriptor, then: @escaping @Sendable () -> Void = {}) {
        let fd = descriptor.rawValue
        let accepted = core.enqueue { loop in
            loop.removeReader(fd)
            then()
        }
        if !accepted { then() }
    }

    /// Sends a message without waiting: a signal, or a method call flagged
    /// ``DBusMessage/noReplyExpected``. Invalid messages throw here; the send itself is queued.
    public func send(_ message: DBusMessage) throws(DBusError) {
        try MessageEncoder.validate(message)
        if message.kind == .methodCall && !message.noReplyExpected {
            throw DBusError(.invalidValue, message: "use call(_:) for calls that expect a reply")
        }
        guard core.enqueue({ loop in loop.send(message) }) else {
            throw DBusError(.disconnected, message: "the connection is closed")
        }
    }

    /// Emits a signal from one of our objects.
    public func emitSignal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, arguments: [DBusValue] = [],
        destination: BusName? = nil
    ) throws(DBusError) {
        try send(
            DBusMessage(
                kind: .signal, path: path, interface: interface, member: member, destination: destination,
                body: arguments))
    }
}
