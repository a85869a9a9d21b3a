/// Which loop timer carries a GATT client's current wake-up (``GattOperationQueue/Action``).
///
/// The machine numbers its wake-up actions, and the shell runs them outside the machine's lock,
/// so an older action may arrive after a newer one. An older action must then change nothing,
/// or a withdrawal could cancel the timer a newer wake-up set, and a queued operation would
/// wait past its deadline.
struct WakeTimerSlot {
    private var generation: UInt64 = 0
    private var timer: UInt64?

    /// Applies the wake-up action of `generation`: `timer` (nil for a withdrawal) becomes
    /// current if the action is newer than the last one applied. Returns the timer to cancel,
    /// if any: the one replaced, or `timer` itself when a newer action came first.
    mutating func apply(generation: UInt64, timer newTimer: UInt64?) -> UInt64? {
        guard generation > self.generation else { return newTimer }
        defer {
            self.generation = generation
            timer = newTimer
        }
        return timer
    }
}
