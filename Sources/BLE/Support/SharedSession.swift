/// "The first subscriber starts it, the last one stops it" for one resource that several
/// subscribers share (a characteristic's notifications), as a pure state machine: events in,
/// actions out, no I/O, no continuation resumed inside.
///
/// - A subscriber that joins while the resource starts waits for that start, and shares its
///   outcome; one that joins when it runs is told at once.
/// - The last subscriber leaving stops it, also when it leaves while the start is still under
///   way (the stop follows the start).
/// - A subscriber joining while the resource stops makes it start again once the stop is done:
///   a stop that races a new start never leaves the newcomer without the resource.
/// - A waiting subscriber can leave before the start is done (its task was cancelled).
/// - After the resource was lost (the link went down, bluetoothd restarted) ``restart()``
///   starts it again for the subscribers it still has.
/// - Subscribers are members by id: leaving is idempotent, and a leave from one that never
///   joined this session (it joined one abandoned since) changes nothing. The shell reports
///   every way a subscriber can end without keeping its own tally in step with the session's;
///   a tally kept beside it drifted (a route removed by a services change between a
///   subscriber's routing and its join skipped that subscriber's leave, and the session kept
///   the characteristic subscribed for nobody).
///
/// `Waiter` is what the shell resumes; `id`s tell subscribers apart.
struct SharedSession<Waiter> {
    /// Where the resource stands.
    enum Phase: Equatable {
        case idle, starting, running, stopping
    }

    /// What the shell must do, in order.
    enum Action {
        /// Start the resource; report with ``startFinished(_:)``.
        case start
        /// Stop the resource; report with ``stopFinished()``.
        case stop
        /// Resume these waiters with the outcome of the start they waited for.
        case resume([Waiter], Result<Void, BLEError>)
    }

    private(set) var phase = Phase.idle
    /// Subscribers that joined and have not left, waiting ones included.
    private var members: Set<UInt64> = []
    private var waiters: [(id: UInt64, waiter: Waiter)] = []

    /// How many subscribers joined and have not left, waiting ones included.
    var subscribers: Int { members.count }

    /// Whether nothing holds or is doing anything with the resource.
    var isUnused: Bool { phase == .idle && members.isEmpty }

    /// Subscriber `id` (each joins once) joins; `waiter` is resumed when the resource runs
    /// (or failed to start).
    mutating func join(_ id: UInt64, _ waiter: Waiter) -> [Action] {
        members.insert(id)
        switch phase {
        case .running:
            return [.resume([waiter], .success(()))]
        case .idle:
            phase = .starting
            waiters.append((id, waiter))
            return [.start]
        case .starting, .stopping:
            // Starting: it shares that start. Stopping: the start follows the stop.
            waiters.append((id, waiter))
            return []
        }
    }

    /// A waiting subscriber gives up (its task was cancelled): it is resumed with
    /// ``BLEError/cancelledByTask`` (and then leaves, as every subscriber does). Nothing
    /// happens for one already resumed.
    mutating func cancelJoin(_ id: UInt64) -> [Action] {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return [] }
        let waiter = waiters.remove(at: index).waiter
        return [.resume([waiter], .failure(.cancelledByTask))]
    }

    /// Subscriber `id` leaves (its iteration ended, or it failed to join). Only its first
    /// leave counts; one that is not a member (never joined, left already, or joined a
    /// session abandoned since) changes nothing.
    mutating func leave(_ id: UInt64) -> [Action] {
        guard members.remove(id) != nil else { return [] }
        guard members.isEmpty, phase == .running else { return [] }
        phase = .stopping
        return [.stop]
    }

    /// The start ended: its waiters learn how; the last subscriber may have left meanwhile.
    mutating func startFinished(_ result: Result<Void, BLEError>) -> [Action] {
        guard phase == .starting else { return [] }
        let resumed = waiters.map(\.waiter)
        waiters.removeAll()
        switch result {
        case .success:
            phase = .running
            var actions: [Action] = resumed.isEmpty ? [] : [.resume(resumed, .success(()))]
            if members.isEmpty {
                phase = .stopping
                actions.append(.stop)
            }
            return actions
        case .failure(let error):
            // The failed joiners leave on their own (``leave()``); nothing runs.
            phase = .idle
            return resumed.isEmpty ? [] : [.resume(resumed, .failure(error))]
        }
    }

    /// The stop ended (however it went: the resource is not held for anyone any more). A
    /// subscriber that joined meanwhile starts it again.
    mutating func stopFinished() -> [Action] {
        guard phase == .stopping else { return [] }
        if waiters.isEmpty {
            phase = .idle
            return []
        }
        phase = .starting
        return [.start]
    }

    /// The resource is gone for good (its characteristic was removed): the waiters, to be
    /// resumed with that news; the session is then unused.
    mutating func abandon() -> [Waiter] {
        let abandoned = waiters.map(\.waiter)
        waiters.removeAll()
        members.removeAll()
        phase = .idle
        return abandoned
    }

    /// The resource was lost under its subscribers (the link or bluetoothd went away and came
    /// back): start it again if anyone still holds it. A start or stop under way reports as usual.
    mutating func restart() -> [Action] {
        guard phase == .running || phase == .idle, !members.isEmpty else { return [] }
        phase = .starting
        return [.start]
    }
}
