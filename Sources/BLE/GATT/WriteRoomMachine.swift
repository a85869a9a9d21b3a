/// The rules of a write channel's wait for room (BlueZ's AcquireWrite socket, full): who
/// waits, when the socket is watched, and how each wait ends. Pure: events in, actions out;
/// the shell (``WriteChannel``) holds the lock, the socket and the waiters' continuations.
///
/// Every wait ends exactly once: room (the socket takes more: every waiter tries again, in the
/// order they came), its caller's cancellation, or the channel's close; a cancellation that
/// comes before its wait ends that wait as soon as it starts. The socket is watched only while
/// someone waits, since a watch for room fires again and again while the socket has room.
struct WriteRoomMachine<Waiter> {
    typealias Outcome = WriteRoomOutcome

    /// What the shell does, in order.
    enum Action {
        /// Ends a wait.
        case resume(Waiter, Outcome)
        /// Starts (true) or stops (false) watching the socket for room.
        case watch(Bool)
        /// Stops watching for good and lets the socket close.
        case release
    }

    private var waiting: [(id: UInt64, waiter: Waiter)] = []
    private var cancelledEarly: Set<UInt64> = []
    private var watching = false
    private(set) var closed = false

    /// `waiter` (known as `id`) waits for room.
    mutating func wait(_ id: UInt64, _ waiter: Waiter) -> [Action] {
        if closed { return [.resume(waiter, .closed)] }
        if cancelledEarly.remove(id) != nil { return [.resume(waiter, .cancelled)] }
        waiting.append((id, waiter))
        guard !watching else { return [] }
        watching = true
        return [.watch(true)]
    }

    /// The socket takes more: every waiter tries again, and the watch stops.
    mutating func roomAvailable() -> [Action] {
        guard watching else { return [] }
        watching = false
        let woken = waiting
        waiting.removeAll()
        return woken.map { .resume($0.waiter, .room) } + [.watch(false)]
    }

    /// The task of `id` was cancelled: its wait ends now, or as soon as it starts.
    mutating func cancel(_ id: UInt64) -> [Action] {
        guard !closed else { return [] }
        guard let index = waiting.firstIndex(where: { $0.id == id }) else {
            cancelledEarly.insert(id)
            return []
        }
        let waiter = waiting.remove(at: index).waiter
        guard waiting.isEmpty, watching else { return [.resume(waiter, .cancelled)] }
        watching = false
        return [.resume(waiter, .cancelled), .watch(false)]
    }

    /// The wait of `id` ended some other way first (its write went through): a cancellation
    /// that comes for it later finds nothing to end.
    mutating func finished(_ id: UInt64) {
        cancelledEarly.remove(id)
    }

    /// The channel closes: every wait ends, and the socket is let go.
    mutating func close() -> [Action] {
        guard !closed else { return [] }
        closed = true
        watching = false
        let woken = waiting
        waiting.removeAll()
        cancelledEarly.removeAll()
        return woken.map { .resume($0.waiter, .closed) } + [.release]
    }
}

/// How a wait for room ended (``WriteRoomMachine``).
enum WriteRoomOutcome: Equatable, Sendable {
    /// The socket takes more: try the write again.
    case room
    /// The waiting task was cancelled.
    case cancelled
    /// The channel was closed (by its owner, or dropped).
    case closed
}

extension WriteRoomMachine.Action: Equatable where Waiter: Equatable {}
