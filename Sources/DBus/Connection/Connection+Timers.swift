import Dispatch

extension Connection {
    /// Suspends the calling task for `duration`, timed by the connection's I/O loop: no timer
    /// thread is woken, and the task resumes on the executor it prefers (on the I/O thread
    /// itself for one that prefers ``executor``). The loop's clock has millisecond steps and
    /// never wakes early.
    ///
    /// - Throws: ``DBusError/Code/cancelled`` as soon as the task is cancelled,
    ///   ``DBusError/Code/disconnected`` when the connection is or becomes closed first.
    public func sleep(for duration: Duration) async throws(DBusError) {
        if Task.isCancelled { throw DBusError(.cancelled, message: "the task was cancelled") }
        let core = self.core
        let id = core.makeID()
        let deadline = MonotonicClock.deadline(after: duration)
        let slot = CallSlot(counters: core.counters)
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                slot.register(continuation)
                let accepted = core.enqueue { loop in
                    loop.addTimer(id, deadline: deadline) { fired in
                        slot.finish(fired ? CallSlot.done : .failure(Self.closedError))
                    }
                }
                if !accepted { slot.finish(.failure(Self.closedError)) }
            }
        } onCancel: {
            if slot.finish(.failure(DBusError(.cancelled, message: "the task was cancelled"))) {
                core.runOrEnqueue { loop in loop.cancelTimer(id) }
            }
        }
        _ = try result.get()
    }

    /// Calls `fire` on the I/O thread once `duration` has passed, or as soon as the connection
    /// closes: a wake-up for code that keeps its own deadlines and checks them when called.
    /// `fire` must not block. Returns the wake-up's id for ``cancelScheduled(_:)``.
    ///
    /// On a connection closed already, `fire` runs once `duration` has passed, on a Dispatch
    /// queue (there is no I/O thread any more). Never at once on the calling thread: code that
    /// finds its deadline not yet due asks for another wake-up, and firing that at once
    /// recursed until the stack overflowed (a GATT client whose connection closed under a
    /// queued operation).
    @discardableResult
    public func schedule(after duration: Duration, _ fire: @escaping @Sendable () -> Void) -> UInt64 {
        let deadline = MonotonicClock.deadline(after: duration)
        let id = core.makeID()
        if let loop = core.loopForDirectWork() {
            loop.addTimer(id, deadline: deadline) { _ in fire() }
            return id
        }
        let accepted = core.enqueue { loop in loop.addTimer(id, deadline: deadline) { _ in fire() } }
        if !accepted {
            let delay = max(0, MonotonicClock.millisecondsUntil(deadline))
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delay))) { fire() }
        }
        return id
    }

    /// Forgets a wake-up set by ``schedule(after:_:)`` that is no longer needed, so that it
    /// neither runs nor stays in the loop's timers until due (a connect's 30 s deadline, once
    /// the connect is done). Nothing happens for one that has run already.
    public func cancelScheduled(_ id: UInt64) {
        if let loop = core.loopForDirectWork() { return loop.cancelTimer(id) }
        core.enqueue { loop in loop.cancelTimer(id) }
    }

    /// How many of the loop's timers are set (wake-ups, sleeps): for tests that check a
    /// component leaves none behind once it is done. 0 once the connection is closed.
    package func scheduledCount() async -> Int {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            let accepted = core.enqueue { loop in continuation.resume(returning: loop.timers.count) }
            if !accepted { continuation.resume(returning: 0) }
        }
    }

    private static var closedError: DBusError { DBusError(.disconnected, message: "the connection is closed") }
}
