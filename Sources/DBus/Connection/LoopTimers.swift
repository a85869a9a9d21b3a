/// The I/O loop's own timers: each timer's job by id, and the deadlines in a heap. No clock and
/// no I/O inside: the loop passes the time in and runs the jobs it is handed.
///
/// A cancelled timer's heap entry is not searched for. It stays where it is until it reaches the
/// top, and is dropped then, so ``nearest`` is always the deadline of a timer still set. Before,
/// such an entry stayed until its deadline passed. A connect's 25 s deadline, cancelled once the
/// device connected, then kept every wait of the loop timed for the next 25 s. Each wait armed a
/// kernel timer and read the clock twice, with nothing to run.
struct LoopTimers<Job> {
    private var jobs: [IntegerKey: (deadline: UInt64, job: Job)] = [:]
    private var deadlines = MinHeap<UInt64, UInt64>()

    /// The nearest deadline of a timer still set; nil when none is.
    var nearest: UInt64? { deadlines.min?.key }

    /// How many timers are set.
    var count: Int { jobs.count }

    /// How many deadlines the heap holds, including those of cancelled timers below its top.
    var heldDeadlines: Int { deadlines.count }

    /// Sets timer `id` for `deadline`.
    mutating func add(_ id: UInt64, deadline: UInt64, _ job: Job) {
        jobs[IntegerKey(id)] = (deadline, job)
        deadlines.insert(deadline, id)
    }

    /// Forgets timer `id`; returns its job if it was still set.
    ///
    /// If the cancelled entries come to outnumber the live ones, the heap is rebuilt. A connect's
    /// stall timer is cancelled almost every time, so without the rebuild the heap would grow
    /// with what was cancelled.
    @discardableResult
    mutating func cancel(_ id: UInt64) -> Job? {
        guard let removed = jobs.removeValue(forKey: IntegerKey(id)) else { return nil }
        if deadlines.count > 2 * jobs.count + 16 {
            deadlines.removeAll()
            for (key, timer) in jobs { deadlines.insert(timer.deadline, key.value) }
        } else {
            dropCancelledTop()
        }
        return removed.job
    }

    /// Takes out the next timer due at `now`, if any: one at a time, because a job may set or
    /// cancel timers when it runs.
    mutating func takeDue(now: UInt64) -> Job? {
        guard let top = deadlines.min, top.key <= now else { return nil }
        deadlines.removeMin()
        let job = jobs.removeValue(forKey: IntegerKey(top.value))?.job
        dropCancelledTop()
        return job
    }

    /// Takes out every timer still set (the connection closed).
    mutating func removeAll() -> [Job] {
        let all = jobs.values.map(\.job)
        jobs.removeAll()
        deadlines.removeAll()
        return all
    }

    /// Pops heap entries whose timer is no longer set, until the top is one that is (or none is
    /// left). A later timer with the same id cannot be mistaken for an earlier one, because its
    /// deadline would differ from the entry's.
    private mutating func dropCancelledTop() {
        while let top = deadlines.min, jobs[IntegerKey(top.value)]?.deadline != top.key {
            deadlines.removeMin()
        }
    }
}
