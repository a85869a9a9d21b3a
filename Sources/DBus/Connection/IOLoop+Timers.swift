/// Timers the loop keeps itself: its `epoll_wait` sleeps no longer than the nearest one, so a
/// wait on the connection needs no timer thread and its wake-up lands on the I/O thread.
extension IOLoop {
    /// Runs `fire(true)` on the I/O thread once `deadline` (``MonotonicClock``) has passed,
    /// unless ``cancelTimer(_:)`` comes first; `fire(false)` at once if the connection closes
    /// before.
    func addTimer(_ id: UInt64, deadline: UInt64, _ fire: @escaping (Bool) -> Void) {
        if closed { return fire(false) }
        timerJobs[id] = (deadline, fire)
        timerDeadlines.insert(deadline, id)
    }

    /// Forgets timer `id`. Its heap entry lingers until due, unless cancelled entries come to
    /// outnumber live ones (a connect's stall timer is cancelled almost every time): then the
    /// heap is rebuilt, so neither it nor the loop's wake-ups grow with what was cancelled.
    func cancelTimer(_ id: UInt64) {
        guard timerJobs.removeValue(forKey: id) != nil else { return }
        guard timerDeadlines.count > 2 * timerJobs.count + 16 else { return }
        timerDeadlines.removeAll()
        for (id, timer) in timerJobs { timerDeadlines.insert(timer.deadline, id) }
    }

    /// Runs the timers that are due.
    func fireTimers() {
        guard timerDeadlines.min != nil else { return }
        let now = MonotonicClock.now()
        while let top = timerDeadlines.min, top.key <= now {
            timerDeadlines.removeMin()
            timerJobs.removeValue(forKey: top.value)?.fire(true)
        }
    }

    /// The connection closed: every timer still set runs now, told so.
    func endTimers() {
        let jobs = timerJobs
        timerJobs.removeAll()
        timerDeadlines.removeAll()
        for timer in jobs.values { timer.fire(false) }
    }
}
