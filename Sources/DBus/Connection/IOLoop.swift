import CDBus
import Glibc

/// The I/O thread's side of a connection: it alone touches libdbus for this connection.
///
/// It blocks in `epoll_wait` on the connection's watch fds and the core's eventfd, with the nearest
/// libdbus timeout or queued-call deadline as its timeout, then handles I/O, runs queued jobs
/// and dispatches messages. No busy polling, no sleeps.
///
/// Its state belongs to the I/O thread alone. What the loop touches on every turn is marked
/// `@exclusivity(unchecked)`, which spares each access a run-time check (a thread-local
/// lookup). On one thread, a conflicting access could only come from a callback re-entering
/// the loop while an access is open, and none is held open across a call into libdbus (whose
/// watch and timeout callbacks are the only re-entry): loops walk copies, and each write ends
/// before the next libdbus call. The compiler still checks every access it can see statically.
final class IOLoop {
    let core: ConnectionCore
    @exclusivity(unchecked) private(set) var connection: OpaquePointer?
    var uniqueName: BusName?
    /// Set once the connection is closed or lost: every later job fails fast.
    @exclusivity(unchecked) var closed = false
    @exclusivity(unchecked) private var stopping = false
    /// Between buses: the bus went and the connection will open again (see
    /// ``ConnectionOptions/reconnection``). Jobs fail fast meanwhile, as when closed.
    @exclusivity(unchecked) var detached = false
    /// The libdbus connection of a lost bus, closed once the dispatch that noticed is over.
    private var releasePending = false
    /// When to try the bus again, and how long the wait after a failed try is.
    private var reopenAt: UInt64 = 0
    private var reopenDelay: Duration = .zero
    /// The bus to open again.
    private var bus: Connection.Bus?

    // Watches and timeouts that libdbus asks us to mirror.
    /// With their fds, read once: a watch keeps its fd, and the loop matches fds on every wake-up.
    @exclusivity(unchecked) private var watches: [(watch: OpaquePointer, fd: Int32)] = []
    /// The fds to sleep on and what for, rebuilt (in place) when a watch changes.
    @exclusivity(unchecked) private var wanted: [(fd: Int32, events: Int16)] = []
    @exclusivity(unchecked) private var readiness = ReadinessSet()
    @exclusivity(unchecked) private var readinessStale = true
    /// Whether libdbus may hold an incoming message the loop has not popped. Only opening the
    /// connection, its reads (a watch handled), its timeouts and a send
    /// (``queueForSending(_:serial:)``: a write that fails queues `Disconnected`) queue one; the
    /// loop pops until none is left.
    /// A turn woken for something else (a socket it reads for a user, a job, a timer) then
    /// skips the pop, whose empty answer costs the connection's lock and a look into its
    /// loader every time.
    @exclusivity(unchecked) private var incomingMayWait = true
    @exclusivity(unchecked) private var timeouts: [Int: (timeout: OpaquePointer, deadline: UInt64)] = [:]
    /// Other fds the loop reads for its users (``Connection/addReader(_:onReadable:)``,
    /// ``Connection/addDatagramReader(_:slotSize:onDatagram:onEnd:)``), with what to do when
    /// each is readable.
    @exclusivity(unchecked) private var readers = LoopReaders()
    /// Where the datagram readers' sockets are read, made at the first and shared by all:
    /// only this thread fills them, one read at a time, and a datagram is handed over before
    /// the next read.
    @exclusivity(unchecked) private var datagramSlots: FileDescriptor.DatagramSlots?

    // Calls (see IOLoop+Calls.swift).
    @exclusivity(unchecked) var calls: [IntegerKey: OutgoingCall] = [:]
    @exclusivity(unchecked) var waitingCalls = CallQueue()
    /// Deadlines of sent calls (deadline, call ID); entries of finished calls linger until due
    /// or pruned.
    @exclusivity(unchecked) var sentDeadlines = MinHeap<UInt64, UInt64>()
    var inFlight = 0
    /// Sent calls awaiting their reply: call ID by the serial the reply will name.
    @exclusivity(unchecked) var sentSerials: [IntegerKey: UInt64] = [:]
    /// Calls encoded lately, copied for the next call of the same shape (see ``EncodedCallCache``).
    @exclusivity(unchecked) var encodedCalls = EncodedCallCache()
    /// Who called lately, for decoding the next call (see ``RecentBusNames``).
    @exclusivity(unchecked) var recentNames = RecentBusNames()
    /// Who answered lately, for decoding the next reply.
    @exclusivity(unchecked) var replyNames = RecentBusNames()
    /// Serials of calls we gave up on (timed out or cancelled) that the bus still counts as
    /// awaiting a reply; each keeps its window slot until that reply arrives.
    var abandonedSerials: Set<UInt32> = []

    // Timers (see IOLoop+Timers.swift).
    @exclusivity(unchecked) var timers = LoopTimers<(Bool) -> Void>()

    // Signals (see IOLoop+Signals.swift).
    var router = SignalRouter()
    var pendingRuleAdds: [String: [(Result<Void, DBusError>) -> Void]] = [:]
    var pendingOwnerQueries: [BusName: [(Result<Void, DBusError>) -> Void]] = [:]

    // Emptied buffers that ``drainJobs()`` swaps with the queue's (see there).
    @exclusivity(unchecked) private var spareJobs: [QueuedJob] = []
    @exclusivity(unchecked) private var spareTasks: [QueuedTask] = []

    /// Whether code the loop runs now may have work done at once instead of queued
    /// (``ConnectionCore/runOrEnqueue(_:)``): while it runs tasks and while it hands out
    /// incoming messages, where none of its own tables is being walked. Not while it runs queued
    /// jobs (one queued after the current one would be overtaken), fires timers (a wake-up set
    /// for now from a timer would fire in the same walk, and again) or expires calls.
    @exclusivity(unchecked) var acceptsDirectJobs = false

    let executor: ConnectionExecutor

    init(core: ConnectionCore, executor: ConnectionExecutor) {
        self.core = core
        self.executor = executor
    }

    /// The thread body: open, report, loop, close.
    static func run(
        core: ConnectionCore, executor: ConnectionExecutor, bus: Connection.Bus,
        opened: @escaping @Sendable (Result<BusName, DBusError>) -> Void
    ) {
        core.adoptCurrentThread()
        // Foundation's `Thread.name` does not reach the kernel here: without this, the thread
        // shows in `top -H`, `perf` and `gdb` under the name of the pool thread that made it.
        _ = cdbus_pthread_setname_np(pthread_self(), "dbus-io")
        // Before the loop allocates anything (see ThreadHeapReservation).
        ThreadHeapReservation.reserve(ThreadHeapReservation.ioThreadBytes)
        let loop = IOLoop(core: core, executor: executor)
        loop.bus = bus
        switch loop.open(bus) {
        case .success(let name):
            core.attach(loop)
            opened(.success(name))
            loop.runUntilClosed()
            core.attach(nil)
        case .failure(let error):
            loop.closeQueue()
            loop.drainJobs()
            opened(.failure(error))
        }
    }

    private func open(_ bus: Connection.Bus) -> Result<BusName, DBusError> {
        guard readiness.isOpen else {
            let reason = String(cString: strerror(readiness.openError))
            return .failure(DBusError(.io, message: "cannot create an epoll set: \(reason)"))
        }
        dbus_threads_init_default()
        guard let error = cdbus_error_new() else {
            return .failure(DBusError(.limitExceeded, message: "out of memory"))
        }
        defer { cdbus_error_delete(error) }
        let raw: OpaquePointer?
        switch bus {
        case .system: raw = dbus_bus_get_private(DBUS_BUS_SYSTEM, error)
        case .session: raw = dbus_bus_get_private(DBUS_BUS_SESSION, error)
        case .address(let address):
            raw = dbus_connection_open_private(address, error)
            if let raw {
                dbus_connection_set_exit_on_disconnect(raw, 0)
                if dbus_bus_register(raw, error) == 0 {
                    dbus_connection_close(raw)
                    dbus_connection_unref(raw)
                    return .failure(Self.connectError(error, bus))
                }
            }
        }
        guard let raw else { return .failure(Self.connectError(error, bus)) }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        connection = raw
        incomingMayWait = true
        guard let name = dbus_bus_get_unique_name(raw) else {
            shutdownConnection()
            return .failure(DBusError(.connectionFailed, message: "the bus gave no unique name"))
        }
        uniqueName = BusName(unchecked: String(cString: name))
        if let uniqueName { core.link.withLock { $0.name = uniqueName } }
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard dbus_connection_set_watch_functions(raw, addWatch, removeWatch, toggleWatch, me, nil) != 0,
            dbus_connection_set_timeout_functions(raw, addTimeout, removeTimeout, toggleTimeout, me, nil) != 0
        else {
            shutdownConnection()
            return .failure(DBusError(.limitExceeded, message: "out of memory setting up the connection"))
        }
        return .success(uniqueName ?? BusName(unchecked: ":0.0"))
    }

    private static func connectError(_ error: UnsafeMutablePointer<CDBus.DBusError>, _ bus: Connection.Bus) -> DBusError
    {
        let name = error.pointee.name.map { String(cString: $0) }
        let message = error.pointee.message.map { String(cString: $0) } ?? "cannot connect to \(bus)"
        return DBusError(.connectionFailed, name: name, message: message)
    }

    // MARK: The loop

    private func runUntilClosed() {
        while !stopping {
            drainJobs()
            dispatchIncoming()
            if stopping { break }
            if releasePending {
                // Out of libdbus's dispatch now: the lost connection can go.
                releasePending = false
                shutdownConnection()
            }
            pruneSentDeadlines()
            let nearest = nearestDeadline()
            let mayBlock: Bool = core.queue.withLock { queue in
                if !queue.jobs.isEmpty || !queue.tasks.isEmpty { return false }
                queue.sleeping = true
                return true
            }
            guard mayBlock else { continue }
            if readinessStale { updateReadiness() }
            let ready = readiness.wait(timeout: nearest == .max ? -1 : MonotonicClock.millisecondsUntil(nearest)) ?? 0
            core.queue.withLock { queue in
                queue.sleeping = false
                queue.wakePending = false
            }
            if ready > 0 { handleReadyFDs(ready) }
            // Nothing is due before the nearest deadline seen before the wait (one set since
            // counts in the next round, whose wait then returns at once): a wake-up for a
            // message reads the clock once and leaves the deadline code alone.
            guard nearest != .max, MonotonicClock.now() >= nearest else { continue }
            fireExpiredTimeouts()
            expireCalls()
            fireTimers()
            if detached, !releasePending, !stopping, MonotonicClock.now() >= reopenAt { reopen() }
        }
        closeQueue()
        drainJobs()
        shutdownConnection()
    }

    /// Runs every job queued so far (jobs queued meanwhile run in the next round).
    ///
    /// The queue's arrays are swapped with spare ones the loop keeps, not copied out: a copy
    /// would leave the queue sharing its buffer, so emptying it would allocate on every round.
    /// A lone task (a paced notification's consumer, resumed by the read that woke the loop) is
    /// taken out as it is, and an empty queue left as it is: neither touches the buffers.
    func drainJobs() {
        var swapped = false
        let lone = core.queue.withLock { queue -> QueuedTask? in
            if queue.jobs.isEmpty {
                if queue.tasks.count == 1 { return queue.tasks.removeLast() }
                if queue.tasks.isEmpty { return nil }
            }
            swap(&queue.jobs, &spareJobs)
            swap(&queue.tasks, &spareTasks)
            swapped = true
            return nil
        }
        if let lone {
            runningTasks { run(lone) }
            return
        }
        guard swapped else { return }
        // Moved out of the spares: a job that drains again meanwhile cannot share them.
        var jobs = takeSpare(&spareJobs)
        var tasks = takeSpare(&spareTasks)
        for job in jobs { job.perform(on: self) }
        if !tasks.isEmpty { runningTasks { for task in tasks { run(task) } } }
        returnSpare(&jobs, to: &spareJobs)
        returnSpare(&tasks, to: &spareTasks)
    }

    /// Runs `body`, which runs tasks, with direct work accepted (see ``acceptsDirectJobs``).
    private func runningTasks(_ body: () -> Void) {
        acceptsDirectJobs = true
        body()
        acceptsDirectJobs = false
    }

    /// Runs a task's job in the role it was enqueued for.
    private func run(_ task: QueuedTask) {
        if task.isolated {
            task.job.runSynchronously(
                isolatedTo: executor.asUnownedSerialExecutor(), taskExecutor: executor.asUnownedTaskExecutor())
        } else {
            task.job.runSynchronously(on: executor.asUnownedTaskExecutor())
        }
    }

    /// Runs queued I/O jobs (not tasks) now; used to keep signals ahead of a reply.
    func drainQueuedJobs() {
        var jobs = takeSpare(&spareJobs)
        core.queue.withLock { swap(&$0.jobs, &jobs) }
        // Called while messages are handed out: queued jobs first, as in drainJobs().
        let accepted = acceptsDirectJobs
        acceptsDirectJobs = false
        for job in jobs { job.perform(on: self) }
        acceptsDirectJobs = accepted
        returnSpare(&jobs, to: &spareJobs)
    }

    /// Moves the spare buffer out, so a job that drains again meanwhile cannot share it.
    private func takeSpare<Element>(_ spare: inout [Element]) -> [Element] {
        var taken: [Element] = []
        swap(&taken, &spare)
        return taken
    }

    private func returnSpare<Element>(_ used: inout [Element], to spare: inout [Element]) {
        // Most rounds ran nothing: emptying goes through the array's generic range
        // replacement, code a paced wake-up otherwise touches twice for nothing.
        if !used.isEmpty { used.removeAll(keepingCapacity: true) }
        if spare.capacity < used.capacity { swap(&used, &spare) }
    }

    private func dispatchIncoming() {
        guard let connection, !closed, incomingMayWait else { return }
        incomingMayWait = false
        // Popped and handed out here, not through dbus_connection_dispatch, which per message
        // copies its list of filters (a link allocated under a global lock for each), looks
        // for a pending call and, for a signal nobody claims, splits its path for an object
        // table this loop leaves empty: a tenth of what a device's signal cost. What it
        // answered itself (org.freedesktop.DBus.Peer) is answered in IOLoop+Peer.swift.
        acceptsDirectJobs = true
        while let message = dbus_connection_pop_message(connection) {
            if !answeredPeerCall(message) { handleIncoming(message) }
            dbus_message_unref(message)
        }
        acceptsDirectJobs = false
    }

    /// The nearest deadline of the loop's timeouts, calls, timers and reopening
    /// (``MonotonicClock``); `.max` when there is none.
    private func nearestDeadline() -> UInt64 {
        var nearest = UInt64.max
        for entry in timeouts.values where entry.deadline < nearest { nearest = entry.deadline }
        if let queued = waitingCalls.nearestDeadline, queued < nearest { nearest = queued }
        if let sent = sentDeadlines.min?.key, sent < nearest { nearest = sent }
        if let timer = timers.nearest, timer < nearest { nearest = timer }
        if detached, reopenAt < nearest { nearest = reopenAt }
        return nearest
    }

    /// Runs whenever libdbus toggles its write watch, which it does around every send: the
    /// wanted events are gathered in place (a connection has one or two watches), with no
    /// allocation, and the epoll set changes only where they differ from what it holds.
    private func updateReadiness() {
        wanted.removeAll(keepingCapacity: true)
        wanted.append((core.wakeFD, Int16(POLLIN)))
        for (watch, fd) in watches where dbus_watch_get_enabled(watch) != 0 {
            let flags = dbus_watch_get_flags(watch)
            var events: Int16 = 0
            if flags & cdbus_watch_readable != 0 { events |= Int16(POLLIN) }
            if flags & cdbus_watch_writable != 0 { events |= Int16(POLLOUT) }
            if let index = wanted.indices.dropFirst().first(where: { wanted[$0].fd == fd }) {
                wanted[index].events |= events
            } else {
                wanted.append((fd, events))
            }
        }
        for fd in readers.descriptors { wanted.append((fd, Int16(POLLIN))) }
        // An fd that could not be registered is tried again before the next sleep.
        readinessStale = !readiness.update(wanted)
    }

    private func handleReadyFDs(_ count: Int) {
        for index in 0..<count {
            let entry = readiness.ready(index)
            if entry.fd == core.wakeFD {
                var counter: UInt64 = 0
                _ = read(core.wakeFD, &counter, 8)
                continue
            }
            if let reader = readers[entry.fd] {
                switch reader {
                case .events(let onReadable): onReadable(entry.events)
                case .datagrams(let reading): readDatagrams(reading)
                }
                continue
            }
            var flags: UInt32 = 0
            if entry.events & Int16(POLLIN) != 0 { flags |= cdbus_watch_readable }
            if entry.events & Int16(POLLOUT) != 0 { flags |= cdbus_watch_writable }
            if entry.events & Int16(POLLERR) != 0 { flags |= cdbus_watch_error }
            if entry.events & Int16(POLLHUP) != 0 { flags |= cdbus_watch_hangup }
            // Handling a watch may add or remove watches: work on a snapshot, re-check each.
            for (watch, fd) in watches where fd == entry.fd {
                guard watches.contains(where: { $0.watch == watch }), dbus_watch_get_enabled(watch) != 0 else {
                    continue
                }
                let wanted = dbus_watch_get_flags(watch) | cdbus_watch_error | cdbus_watch_hangup
                if flags & wanted != 0 {
                    dbus_watch_handle(watch, flags & wanted)
                    incomingMayWait = true
                }
            }
        }
    }

    private func fireExpiredTimeouts() {
        guard !timeouts.isEmpty else { return }
        let now = MonotonicClock.now()
        // Most wake-ups expire nothing: check before collecting anything.
        guard timeouts.values.contains(where: { $0.deadline <= now }) else { return }
        let due = timeouts.filter { $0.value.deadline <= now }
        for (key, entry) in due {
            guard timeouts[key] != nil else { continue }
            let interval = UInt64(max(0, dbus_timeout_get_interval(entry.timeout)))
            timeouts[key]?.deadline = now + interval * 1_000_000
            dbus_timeout_handle(entry.timeout)
            incomingMayWait = true
        }
    }

    // MARK: Watch and timeout callbacks

    fileprivate func watchAdded(_ watch: OpaquePointer) {
        watches.append((watch, dbus_watch_get_unix_fd(watch)))
        readinessStale = true
    }

    fileprivate func watchRemoved(_ watch: OpaquePointer) {
        // Its fd may be closed next and its number reused; another watch on it is registered
        // again by the rebuild.
        for (removed, fd) in watches where removed == watch { readiness.forget(fd) }
        watches.removeAll { $0.watch == watch }
        readinessStale = true
    }

    fileprivate func watchToggled() { readinessStale = true }

    fileprivate func timeoutChanged(_ timeout: OpaquePointer) {
        let key = Int(bitPattern: UnsafeRawPointer(timeout))
        if dbus_timeout_get_enabled(timeout) != 0 {
            let interval = UInt64(max(0, dbus_timeout_get_interval(timeout)))
            timeouts[key] = (timeout, MonotonicClock.now() + interval * 1_000_000)
        } else {
            timeouts[key] = nil
        }
    }

    fileprivate func timeoutRemoved(_ timeout: OpaquePointer) {
        timeouts[Int(bitPattern: UnsafeRawPointer(timeout))] = nil
    }

    // MARK: Readers

    /// Starts doing what `reader` says whenever `fd` is readable.
    func addReader(_ fd: Int32, _ reader: LoopReader) {
        readers.set(reader, for: fd)
        readinessStale = true
    }

    /// Reads what is queued on a datagram reader's socket and hands it over; its end, if the
    /// read met one.
    private func readDatagrams(_ reading: DatagramReading) {
        let slots: FileDescriptor.DatagramSlots
        if let kept = datagramSlots, kept.slotSize >= reading.slotSize {
            slots = kept
        } else {
            slots = FileDescriptor.DatagramSlots(slotSize: reading.slotSize)
            datagramSlots = slots
        }
        // Slots made for a longer reader's datagrams: each is cut to what this one asked for.
        let limit = reading.slotSize
        let end = reading.descriptor.receiveDatagrams(into: slots) { bytes in
            reading.onDatagram(bytes.count > limit ? UnsafeRawBufferPointer(rebasing: bytes.prefix(limit)) : bytes)
        }
        if end != .drained { reading.onEnd(end) }
    }

    /// Stops watching `fd`; the caller closes it only after this ran, so its number is not
    /// watched when reused.
    func removeReader(_ fd: Int32) {
        guard readers.remove(fd) else { return }
        readiness.forget(fd)
        readinessStale = true
    }

    // MARK: Shutdown

    /// Stops accepting jobs; jobs already queued still run, in closed mode.
    private func closeQueue() {
        core.queue.withLock { $0.closed = true }
    }

    /// Closes the connection at the caller's request or because the bus went away: fails every
    /// call, ends every subscription, and lets the loop exit.
    func markClosed(reason: DBusError) {
        guard !closed else { return }
        closed = true
        stopping = true
        closeQueue()
        failAllCalls(with: reason)
        endTimers()
        router.finishAll()
    }

    /// The bus went away and the connection is to come back: every call fails, every
    /// subscription ends (with the rules the bus had for them), and the loop opens the bus
    /// again after the first delay. The libdbus connection is released after this dispatch.
    func detach(reason: DBusError) {
        guard !closed, !detached, let reconnection = core.options.reconnection else { return }
        detached = true
        core.link.withLock { $0.detached = true }
        failAllCalls(with: reason)
        pendingRuleAdds.removeAll()
        router.finishAll()
        router = SignalRouter()
        recentNames = RecentBusNames()
        releasePending = true
        reopenDelay = reconnection.initialDelay
        reopenAt = MonotonicClock.deadline(after: reopenDelay)
    }

    /// Tries the bus again: on success the connection is back (with a new unique name) and the
    /// handlers learn it; else the next try waits twice as long, up to the maximum.
    private func reopen() {
        guard let bus, let reconnection = core.options.reconnection else { return }
        switch open(bus.reopening) {
        case .success(let name):
            detached = false
            readinessStale = true
            for handler in core.reopenHandlers.withLock({ $0 }) { handler(name) }
            // Said after the handlers ran: whoever sees it connected sees them done.
            core.link.withLock { $0.detached = false }
        case .failure:
            reopenDelay = min(reopenDelay * 2, reconnection.maximumDelay)
            reopenAt = MonotonicClock.deadline(after: reopenDelay)
        }
    }

    private func shutdownConnection() {
        guard let connection else { return }
        self.connection = nil
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
        watches.removeAll()
        timeouts.removeAll()
        encodedCalls.removeAll()
    }

    /// Sends an already-encoded message without waiting for anything.
    func sendRaw(_ raw: OpaquePointer) {
        guard !closed else { return }
        _ = queueForSending(raw, serial: nil)
    }

    /// Hands `raw` to libdbus, which writes what the socket takes now; false when it could not
    /// queue it (out of memory). Every send goes through here: see ``incomingMayWait``.
    func queueForSending(_ raw: OpaquePointer, serial: UnsafeMutablePointer<UInt32>?) -> Bool {
        guard let connection else { return false }
        incomingMayWait = true
        return dbus_connection_send(connection, raw, serial) != 0
    }

    /// Encodes and sends a message that expects no reply (signals, replies, no-reply calls);
    /// see ``MessageEncoder/encode(_:valuesValidated:)`` for `valuesValidated`.
    func send(_ message: DBusMessage, valuesValidated: Bool = false) {
        guard let raw = try? MessageEncoder.encode(message, valuesValidated: valuesValidated) else { return }
        sendRaw(raw)
        dbus_message_unref(raw)
    }
}

private func loop(_ data: UnsafeMutableRawPointer?) -> IOLoop? {
    guard let data else { return nil }
    return Unmanaged<IOLoop>.fromOpaque(data).takeUnretainedValue()
}

private func addWatch(_ watch: OpaquePointer?, _ data: UnsafeMutableRawPointer?) -> dbus_bool_t {
    guard let watch, let loop = loop(data) else { return 0 }
    loop.watchAdded(watch)
    return 1
}

private func removeWatch(_ watch: OpaquePointer?, _ data: UnsafeMutableRawPointer?) {
    guard let watch, let loop = loop(data) else { return }
    loop.watchRemoved(watch)
}

private func toggleWatch(_ watch: OpaquePointer?, _ data: UnsafeMutableRawPointer?) {
    loop(data)?.watchToggled()
}

private func addTimeout(_ timeout: OpaquePointer?, _ data: UnsafeMutableRawPointer?) -> dbus_bool_t {
    guard let timeout, let loop = loop(data) else { return 0 }
    loop.timeoutChanged(timeout)
    return 1
}

private func removeTimeout(_ timeout: OpaquePointer?, _ data: UnsafeMutableRawPointer?) {
    guard let timeout, let loop = loop(data) else { return }
    loop.timeoutRemoved(timeout)
}

private func toggleTimeout(_ timeout: OpaquePointer?, _ data: UnsafeMutableRawPointer?) {
    guard let timeout, let loop = loop(data) else { return }
    loop.timeoutChanged(timeout)
}
