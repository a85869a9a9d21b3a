/// Timers the loop keeps itself: its `epoll_wait` sleeps no longer than the nearest one, so a
/// wait on the connection needs no timer thread and its wake-up lands on the I/O thread.
extension IOLoop {
    /// Runs `fire(true)` on the I/O thread once `deadline` (``MonotonicClock``) has passed,
    /// unless ``cancelTimer(_:)`` comes first; `fire(false)` at once if the connection closes
    /// before.
    func addTimer(_ id: UInt64, deadline: UInt64, _ fire: @escaping (Bool) -> Void) {
        if closed { return fire(false) }
        timers.add(id, deadline: deadline, fire)
    }

    /// Forgets timer `id`: it neither runs nor keeps the loop's waits short (``LoopTimers``).
    func cancelTimer(_ id: UInt64) {
        timers.cancel(id)
    }

    /// Runs the timers that are due.
    func fireTimers() {
        guard timers.nearest != nil else { return }
        let now = MonotonicClock.now()
        while let fire = timers.takeDue(now: now) { fire(true) }
    }

    /// The connection closed: every timer still set runs now, told so.
    func endTimers() {
        for fire in timers.removeAll() { fire(false) }
    }
}
