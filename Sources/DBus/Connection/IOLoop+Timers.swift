/// Timers the loop keeps itself: its `epoll_wait` sleeps no longer than the nearest one, so a
/// wait on the connection needs no timer thread and its wake-up lands on the I/O thread.
extension IOLoop {
    /// Runs `fire(true)` on the I/O thread once `deadline` (``MonotonicClock``) has passed,
    /// unless ``cancelTimer(_:)`` comes first; `fire(false)` at once if the connection closes
    /// before.
    func addTimer(_ id: UInt64, deadline: UInt64, _ fire: @escaping (Bool) -> Void) {
        if closed { return fire(false) }
        timerJobs[id] = fire
        timerDeadlines.insert(deadline, id)
    }

    /// Forgets timer `id` (its heap entry lingers until due or pruned).
    func cancelTimer(_ id: UInt64) {
        timerJobs[id] = nil
        if timerJobs.isEmpty { timerDeadlines.removeAll() }
    }

    /// Runs the timers that are due.
    func fireTimers() {
        guard let first = timerDeadlines.min, first.key <= MonotonicClock.now() else { return }
        let now = MonotonicClock.now()
        while let top = timerDeadlines.min, top.key <= now {
            timerDeadlines.removeMin()
            timerJobs.removeValue(forKey: top.value)?(true)
        }
    }

    /// The connection closed: every timer still set runs now, told so.
    func endTimers() {
        let jobs = timerJobs
        timerJobs.removeAll()
        timerDeadlines.removeAll()
        for fire in jobs.values { fire(false) }
    }
}
