/// The connection's I/O thread as an executor.
///
/// Tasks that prefer it (`withTaskExecutorPreference(connection.executor)`) and actors that
/// return its ``asUnownedSerialExecutor()`` run on the I/O thread itself, between rounds of
/// I/O: a call then costs no thread hop in either direction, which is where most of the cost
/// of a D-Bus round trip goes. Code running there must not block: it would stall all I/O of
/// the connection.
public final class ConnectionExecutor: TaskExecutor, SerialExecutor {
    let core: ConnectionCore

    init(core: ConnectionCore) { self.core = core }

    /// Runs `job` on the I/O thread. If the connection is already closed, the job still runs,
    /// on the calling thread, so no task is ever left suspended forever.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = core.enqueueTask(job)
        if !accepted {
            job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
        }
    }

    /// This executor as a serial executor reference, for actors.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
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
