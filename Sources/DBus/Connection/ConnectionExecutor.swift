/// The connection's I/O thread as an executor.
///
/// Tasks that prefer it (`withTaskExecutorPreference(connection.executor)`) and actors that
/// return its ``asUnownedSerialExecutor()`` run on the I/O thread itself, between rounds of
/// I/O: a call then costs no thread hop in either direction, which is where most of the cost
/// of a D-Bus round trip goes. Code running there must not block: it would stall all I/O of
/// the connection.
///
/// The two roles enqueue apart: a job of a task that prefers this executor runs as the
/// generic executor's (on this task executor), a job of an actor's code as this serial
/// executor's. Had both run as the serial executor's, every nonisolated async function of such
/// a task would hop off it again on entry and after each call: one more turn of the loop each,
/// five per write without response in a worker loop (callgrind).
public final class ConnectionExecutor: TaskExecutor, SerialExecutor {
    let core: ConnectionCore
    /// The serial role, for actors: its own object, so the loop knows which role a job came by.
    let serial: ConnectionSerialExecutor

    init(core: ConnectionCore) {
        self.core = core
        serial = ConnectionSerialExecutor(core: core)
    }

    /// Runs `job` on the I/O thread, as a task that prefers this executor (not isolated to an
    /// actor). If the connection is already closed, the job still runs, on the calling
    /// thread, so no task is ever left suspended forever.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if !core.enqueueTask(job, isolated: false) { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// This executor as a serial executor reference, for actors.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        serial.asUnownedSerialExecutor()
    }

    /// This executor as a task executor reference.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Whether the caller runs on this connection's I/O thread: `assumeIsolated` on an actor
    /// of this executor traps anywhere else.
    public func checkIsolated() {
        precondition(core.isOnIOThread, "not on the bus connection's I/O thread")
    }

    /// Whether the caller runs on this connection's I/O thread, where the actors of this
    /// executor may be entered synchronously (with `assumeIsolated`) when no job of theirs is
    /// running: code the loop calls back (a reply, a signal, a timer) runs between jobs.
    public var isCurrent: Bool { core.isOnIOThread }
}

/// The serial role of a ``ConnectionExecutor``: where the jobs of actors that run on the I/O
/// thread are enqueued.
final class ConnectionSerialExecutor: SerialExecutor {
    let core: ConnectionCore

    init(core: ConnectionCore) { self.core = core }

    /// Runs `job` on the I/O thread, isolated to this executor; on the calling thread when the
    /// connection is closed.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if !core.enqueueTask(job, isolated: true) { job.runSynchronously(on: asUnownedSerialExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// `assumeIsolated` on an actor of this executor traps anywhere but the I/O thread.
    func checkIsolated() {
        precondition(core.isOnIOThread, "not on the bus connection's I/O thread")
    }
}
