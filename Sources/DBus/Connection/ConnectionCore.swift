import CDBus
import Glibc
import Synchronization

/// A unit of work for the I/O thread; it receives the loop that owns the libdbus connection.
typealias IOJob = @Sendable (IOLoop) -> Void

/// Work queued for the I/O thread. Not an array of bare closures, which stores each behind a
/// reabstraction thunk (an allocation per job); and a message built already needs no closure.
enum QueuedJob: Sendable {
    case run(IOJob)
    /// A message built on another thread (a reply, a signal), only to be sent.
    case send(OwnedMessage)

    func perform(on loop: IOLoop) {
        switch self {
        case .run(let job): job(loop)
        case .send(let message):
            loop.sendRaw(message.raw)
            message.release()
        }
    }
}

/// A task job and the role of the executor it was enqueued on.
struct QueuedTask {
    let job: UnownedJob
    /// Enqueued on the serial executor (to run an actor's code), not on the task executor.
    let isolated: Bool
}

/// The part of a connection that any thread may touch: the job queue, the wake-up eventfd,
/// the exported-object table and the counters. Everything libdbus is in ``IOLoop``.
final class ConnectionCore: Sendable {
    struct Queue: ~Copyable {
        var jobs: [QueuedJob] = []
        /// Task jobs for ``ConnectionExecutor``, kept apart so running a task costs no closure.
        var tasks: [QueuedTask] = []
        /// True while the loop is blocked in `epoll_wait`; only then does a producer write the eventfd.
        var sleeping = false
        var wakePending = false
        var closed = false
    }

    let queue = PosixMutex(Queue())
    /// The unique name the bus gave, and whether the connection is between buses (lost, and
    /// coming back: ``ConnectionOptions/reconnection``). Set by the I/O thread.
    let link = PosixMutex((name: BusName(unchecked: ":0.0"), detached: false))
    /// What runs on the I/O thread each time the connection is back on a bus.
    let reopenHandlers = PosixMutex<[@Sendable (BusName) -> Void]>([])
    let wakeFD: Int32
    let objects: PosixMutex<ObjectTable>
    let nextID = Atomic<UInt64>(1)
    /// The I/O thread (its `pthread_t`), set once it starts: code handed a reply or a signal
    /// tells from it whether it may act on the connection's actors at once (``isOnIOThread``).
    private let ioThread = Atomic<UInt>(0)
    let counters = ConnectionCounters()
    let options: ConnectionOptions

    init(options: ConnectionOptions) throws(DBusError) {
        self.options = options
        objects = PosixMutex(ObjectTable(conventions: options.exportConventions))
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        if fd < 0 { throw DBusError(.io, message: "eventfd failed: errno \(errno)") }
        wakeFD = fd
    }

    deinit { Glibc.close(wakeFD) }

    func makeID() -> UInt64 { nextID.wrappingAdd(1, ordering: .relaxed).oldValue }

    /// Marks the calling thread as the I/O thread (called by the loop as it starts).
    func adoptCurrentThread() { ioThread.store(UInt(pthread_self()), ordering: .releasing) }

    /// Whether the caller runs on the I/O thread: the thread that runs the connection's jobs,
    /// tasks and callbacks, and the actors whose executor it is.
    var isOnIOThread: Bool { ioThread.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// The loop while it runs. Unsafe for the compiler, safe by thread: it is written only by
    /// the loop on the I/O thread (``attach(_:)``) and read only after ``isOnIOThread`` says the
    /// reader is that thread, so no two threads ever touch it. A lock here would be taken on
    /// every call and wake-up of the hot path for a value one thread uses.
    nonisolated(unsafe) private var runningLoop: IOLoop?

    /// Called by the loop on the I/O thread: itself as it starts, nil as it ends.
    func attach(_ loop: IOLoop?) { runningLoop = loop }

    /// Runs `job` at once when the caller is on the I/O thread at a point where the loop takes
    /// direct work (while it runs tasks or hands out messages; see
    /// ``IOLoop/acceptsDirectJobs``) and no job queued before it waits; otherwise queues it.
    /// At once, a call made by code the loop runs (an actor on its executor answering a reply)
    /// goes out before that code goes on, with no queueing, wake-up or extra round of the loop.
    /// Returns false once the connection is closed, as ``enqueue(_:)`` does.
    @discardableResult
    func runOrEnqueue(_ job: @escaping IOJob) -> Bool {
        if let loop = loopForDirectWork() {
            job(loop)
            return true
        }
        return enqueue(job)
    }

    /// The loop, when the caller may act on it at once (see ``runOrEnqueue(_:)``), else nil:
    /// for work that costs no closure when done at once.
    func loopForDirectWork() -> IOLoop? {
        guard isOnIOThread, let loop = runningLoop, loop.acceptsDirectJobs,
            queue.withLock({ $0.jobs.isEmpty && !$0.closed })
        else { return nil }
        return loop
    }

    /// Queues `job` for the I/O thread; returns false once the connection is closed, in which
    /// case the job will never run and the caller must finish whatever it was for.
    @discardableResult
    func enqueue(_ job: @escaping IOJob) -> Bool {
        push { $0.jobs.append(.run(job)) }
    }

    /// Queues a built message to be sent in order with the jobs queued before it; its
    /// reference is given up either way.
    func enqueueSend(_ message: OwnedMessage) {
        if !push({ $0.jobs.append(.send(message)) }) { message.release() }
    }

    /// Queues a task job for the I/O thread (see ``ConnectionExecutor``): `isolated` when it
    /// was enqueued on the serial executor (an actor's code), not on the task executor.
    func enqueueTask(_ job: UnownedJob, isolated: Bool) -> Bool {
        push { $0.tasks.append(QueuedTask(job: job, isolated: isolated)) }
    }

    /// Queues the job that closes the connection and stops accepting others in the same step,
    /// so nothing queued after `close()` can wait for a loop that is about to exit.
    func enqueueFinal(_ job: @escaping IOJob) {
        push { queue in
            queue.jobs.append(.run(job))
            queue.closed = true
        }
    }

    /// Adds work under the lock and wakes the loop only if it sleeps in `epoll_wait` and nobody
    /// has woken it yet: under load the eventfd is not written at all.
    @discardableResult
    private func push(_ add: (inout Queue) -> Void) -> Bool {
        let (accepted, mustWake) = queue.withLock { queue -> (Bool, Bool) in
            if queue.closed { return (false, false) }
            add(&queue)
            if queue.sleeping && !queue.wakePending {
                queue.wakePending = true
                return (true, true)
            }
            return (true, false)
        }
        if mustWake { wake() }
        return accepted
    }

    var isClosed: Bool { queue.withLock { $0.closed } }

    func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }
}

/// Counts kept for tests and diagnostics: every continuation the connection creates is
/// resumed exactly once, and these prove it.
public final class ConnectionCounters: Sendable {
    let started = Atomic<Int>(0)
    let finished = Atomic<Int>(0)
    let repliesIgnored = Atomic<Int>(0)
    let signals = Atomic<Int>(0)

    /// Calls (and other suspensions) begun.
    public var callsStarted: Int { started.load(ordering: .relaxed) }
    /// Calls whose caller has been resumed.
    public var callsFinished: Int { finished.load(ordering: .relaxed) }
    /// Suspended callers not yet resumed.
    public var outstanding: Int { callsStarted - callsFinished }
    /// Replies and error replies that arrived for no call awaiting one (late answers to calls
    /// that timed out or were cancelled, or replies nobody asked for) and were dropped.
    public var repliesIgnoredCount: Int { repliesIgnored.load(ordering: .relaxed) }
    /// Signals the bus delivered to this connection (for any subscription, taken or not):
    /// what the connection's match rules cost it.
    public var signalsReceived: Int { signals.load(ordering: .relaxed) }
}
