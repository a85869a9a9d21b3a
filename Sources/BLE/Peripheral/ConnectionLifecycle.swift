/// The rules of one peripheral's link, as a pure state machine: events in, actions out, no I/O,
/// no clock (time comes in as `now`), no continuation resumed inside. ``Peripheral`` is the
/// shell that feeds it and runs its actions.
///
/// - **Connect attempts.** Callers wait on one attempt; each has its own deadline and may
///   leave (cancelled, timed out) on its own. The last one leaving abandons the attempt, and is
///   told to send `Disconnect` before it throws, so no half-open link remains (BlueZ cancels a
///   pending `Connect` that way).
/// - **Resolution.** The attempt ends when the device is connected and resolved, whichever
///   of the `Connect` reply and those flags comes first (Q2: the reply usually comes first, not
///   always). A `Connect` answered while the mirror still says disconnected makes the shell
///   re-read the device: bluetoothd 5.66 can hold the link and never signal `Connected=true`.
///   When the device's GATT objects arrived with this attempt (a first connection, or a
///   changed database), the shell makes one call once resolved: its reply, sent after every
///   signal of the resolution, is the barrier behind which the objects' `InterfacesAdded` have
///   all arrived (Q1). When the mirror held the objects before the attempt and they did not
///   change, the usual reconnection (Q3), nothing is missing and the link is up at once.
/// - **A stalled attempt** (no resolution by half of a deadline of 10 s or more) is
///   disconnected and made once more within what is left of the deadline.
/// - **Link loss** fails pending operations at once; the event says why (the shell may wait
///   for the adapter's power state before it says so) and the reconnect policy decides what
///   follows: attempts with backoff, until one succeeds, a non-transient error, or the limit.
/// - **Disconnect** ends once bluetoothd answered and the mirror says the link is down (or
///   the signals did not come within the settle limit); a refused `Disconnect` leaves the link
///   as bluetoothd says it is.
///
/// `Waiter` is what the shell resumes; ids tell waiters apart for cancellation.
struct ConnectionLifecycle<Waiter> {
    typealias Instant = MachineInstant

    /// What the mirror says of the device, read by the shell when it reports an event.
    struct Device: Equatable, Sendable {
        /// Whether the device object exists.
        var present = true
        /// `Device1.Connected`.
        var connected = false
        /// `Device1.ServicesResolved`.
        var resolved = false
        /// The version of the device's GATT objects in the mirror
        /// (``BlueZObjectTree/gattLayoutVersion(of:)``); nil when it holds none. The machine reads
        /// it only at the start of an attempt and when the device is connected and resolved, and
        /// the shell may leave it out otherwise.
        var layout: UInt64? = nil
    }

    /// A wake-up the shell schedules and reports with ``timerFired(_:now:)``.
    enum Timer: Hashable, Sendable {
        /// A connect caller's deadline.
        case deadline(waiter: UInt64)
        /// Half of the first caller's deadline: the attempt may be made once more.
        case stall(attempt: UInt64)
        /// How long a finished `Disconnect` waits for the mirror to see the link down.
        case settle(call: UInt64)
    }

    /// What the shell must do, in order.
    enum Action {
        /// Call `Device1.Connect`, bounded by `deadline`; report ``connectReplied(call:_:device:)``.
        case sendConnect(call: UInt64, deadline: Instant)
        /// Call `Device1.Disconnect` for ``disconnect(_:_:device:)``; report
        /// ``disconnectReplied(call:_:device:now:)``.
        case sendDisconnect(call: UInt64)
        /// A stalled attempt: call `Disconnect` before trying again; report
        /// ``restartReplied(call:device:now:)`` whatever the outcome.
        case restartLink(call: UInt64)
        /// Re-read the device's properties: `Connect` was answered, `Connected` not seen.
        case refreshDevice
        /// The device resolved: refresh what changes silently, then report
        /// ``refreshFinished(attempt:device:)``.
        case refreshResolved(attempt: UInt64)
        /// Call back at `at`.
        case schedule(Timer, at: Instant)
        /// Resume a caller with its outcome and what it still does.
        case resume(Waiter, Result<Void, BLEError>, LinkFollowUp)
        /// The link is down: fail every pending GATT operation.
        case failOperations(DisconnectReason)
        /// Tell the peripheral's event listeners.
        case announce(ConnectionEvent)
        /// Draw the delay of reconnect attempt `attempt`, announce it and report
        /// ``reconnectDue(attempt:)`` once it has passed.
        case scheduleReconnect(attempt: Int)
        /// Make reconnect attempt `attempt` (a connect with `reconnecting: true`); report
        /// ``reconnectFinished(attempt:_:)``.
        case reconnect(attempt: Int)
        /// Stop a reconnect delay that is running (a running reconnect attempt ends on its own).
        case stopReconnecting
        /// A stalled attempt is being made once more (for the log).
        case stalled
    }

    /// Where the link stands, as ``Peripheral/state`` tells it.
    private(set) var phase = ConnectionState.disconnected
    /// What the link does after a loss it did not ask for.
    var policy: ReconnectPolicy

    private var attempt: Attempt?
    private var disconnecting: Disconnecting?
    private var reconnecting = Reconnecting.idle
    private var nextID: UInt64 = 1

    private struct Attempt {
        enum Stage: Equatable {
            /// `Connect` sent (`call`), waiting for resolution.
            case calling(call: UInt64, answered: Bool)
            /// Stalled: `Disconnect` sent (`call`) before the second `Connect`.
            case restarting(call: UInt64)
            /// Resolved: the refresh is under way.
            case settling
        }

        var id: UInt64
        var number = 1
        var stage: Stage
        /// The first caller's deadline, which the second try of a stalled attempt keeps.
        var deadline: Instant
        var waiters: [(id: UInt64, waiter: Waiter)]
        /// Started by the reconnect policy (not by the app).
        var byReconnect: Bool
        /// The layout the mirror held when the attempt began: resolution with the same one
        /// needs no barrier.
        var layoutBefore: UInt64?
    }

    private struct Disconnecting {
        var call: UInt64
        var waiters: [(id: UInt64, waiter: Waiter)]
        /// Answered, waiting for the mirror to see the link down.
        var answered = false
        /// A connect took over meanwhile: the outcome no longer moves the phase.
        var superseded = false
    }

    private enum Reconnecting: Equatable {
        case idle
        case waiting(attempt: Int, lastFailure: BLEError.Code)
        case running(attempt: Int, lastFailure: BLEError.Code)
    }

    init(policy: ReconnectPolicy) { self.policy = policy }

    /// Whether the link is up (or going down by request): a loss of it is news.
    var isLinked: Bool { phase == .connected || phase == .disconnecting }

    /// How many callers wait for the connect attempt under way.
    var connectWaiterCount: Int { attempt?.waiters.count ?? 0 }

    /// Whether this process is disconnecting the link.
    var isDisconnecting: Bool { disconnecting.map { !$0.superseded } ?? false }

    /// Whether `timer` still matters: the shell forgets the wake-ups that no longer do.
    func needs(_ timer: Timer) -> Bool {
        switch timer {
        case .deadline(let waiter):
            return attempt?.waiters.contains { $0.id == waiter } ?? false
        case .stall(let id):
            guard let running = attempt, running.id == id, running.number == 1, case .calling = running.stage
            else { return false }
            return true
        case .settle(let call):
            return disconnecting.map { $0.call == call && $0.answered } ?? false
        }
    }

    /// The wake-ups among `timers` that no longer matter.
    ///
    /// `mutating` although it changes nothing: called on the machine the shell stores, it
    /// reads it in place, where a query copies the whole machine first (its attempt, its
    /// waiters) — once per timer per run of actions, several times per connection.
    mutating func unneeded<Timers: Sequence<Timer>>(among timers: Timers) -> [Timer] {
        // Most runs of actions leave every wake-up needed: then no array is made.
        guard timers.contains(where: { !needs($0) }) else { return [] }
        return timers.filter { !needs($0) }
    }

    private mutating func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    // MARK: Connecting

    /// A caller asks for the link, within `timeout`; `retryable` when the deadline leaves room
    /// for a second try. A connect from the app (`reconnecting` false) takes over from the
    /// reconnect policy: it shares an attempt the policy made, and no further one follows.
    mutating func connect(
        _ id: UInt64, _ waiter: Waiter, timeout: Duration, retryable: Bool, reconnecting: Bool, device: Device,
        now: Instant
    ) -> [Action] {
        var actions: [Action] = []
        if !reconnecting, self.reconnecting != .idle {
            self.reconnecting = .idle
            actions.append(.stopReconnecting)
        }
        if phase == .connected, device.connected, device.resolved, attempt == nil {
            return actions + [.resume(waiter, .success(()), .none)]
        }
        let deadline = now + timeout
        if var running = attempt {
            running.waiters.append((id, waiter))
            if !reconnecting { running.byReconnect = false }
            attempt = running
            return actions + [.schedule(.deadline(waiter: id), at: deadline)]
        }
        disconnecting?.superseded = true
        phase = .connecting
        var started = Attempt(
            id: makeID(), stage: .settling, deadline: deadline, waiters: [(id, waiter)], byReconnect: reconnecting,
            layoutBefore: device.layout)
        attempt = started
        let linked = device.connected && device.resolved
        if !linked {
            let call = makeID()
            started.stage = .calling(call: call, answered: false)
            attempt = started
            actions.append(.sendConnect(call: call, deadline: deadline))
        }
        // The Connect goes before its wake-ups: the shell runs actions in order, and what it
        // does before the call delays every connection, where a wake-up set after it does not
        // (no reply is taken before the actions are done).
        actions.append(.schedule(.deadline(waiter: id), at: deadline))
        if retryable { actions.append(.schedule(.stall(attempt: started.id), at: now + timeout.half)) }
        // Linked already (by another process, or a reply this process never saw).
        return linked ? actions + resolved(device) : actions
    }

    /// bluetoothd answered `Connect`.
    /// Whether Connect `call` is still awaited: its attempt neither ended nor moved on (the
    /// shell asks before it sends a Connect it had to delay).
    func awaitsConnect(call: UInt64) -> Bool {
        guard let running = attempt, case .calling(call, answered: false) = running.stage else { return false }
        return true
    }

    mutating func connectReplied(call: UInt64, _ result: Result<Void, BLEError>, device: Device) -> [Action] {
        guard var running = attempt, case .calling(call, _) = running.stage else { return [] }
        switch result {
        case .failure(let error):
            let followUp: LinkFollowUp =
                error.code == .cancelled && error.dbusErrorName != nil
                ? .disconnectUnlessDaemonLeaves : error.code == .timeout ? .disconnect : .none
            return fail(error, followUp: followUp)
        case .success:
            running.stage = .calling(call: call, answered: true)
            attempt = running
            if device.connected, device.resolved { return resolved(device) }
            // Answered, so bluetoothd holds the link; the mirror may have missed it.
            return device.connected ? [] : [.refreshDevice]
        }
    }

    /// The device changed in the mirror (or was re-read); `daemonPresent` says whether
    /// bluetoothd is on the bus.
    mutating func deviceChanged(_ device: Device, daemonPresent: Bool) -> [Action] {
        var actions: [Action] = []
        if let running = attempt, case .calling = running.stage {
            if !device.present {
                // The mirror is emptied as bluetoothd leaves, before the session says so.
                actions += fail(
                    daemonPresent
                        ? BLEError(.notFound, message: "the device vanished while connecting") : .bluetoothGone,
                    followUp: .none)
            } else if device.connected, device.resolved {
                actions += resolved(device)
            }
        }
        if let pending = disconnecting, pending.answered, !device.connected {
            actions += disconnectFinished()
        }
        return actions
    }

    private mutating func resolved(_ device: Device) -> [Action] {
        guard var running = attempt else { return [] }
        running.stage = .settling
        attempt = running
        // The objects the mirror held before are all there is: no InterfacesAdded is due.
        if let before = running.layoutBefore, device.layout == before { return linkUp(running) }
        return [.refreshResolved(attempt: running.id)]
    }

    /// The refresh after resolution is done: the link is up.
    mutating func refreshFinished(attempt id: UInt64) -> [Action] {
        guard let running = attempt, running.id == id, running.stage == .settling else { return [] }
        return linkUp(running)
    }

    private mutating func linkUp(_ running: Attempt) -> [Action] {
        attempt = nil
        phase = .connected
        if running.byReconnect, case .running = reconnecting { reconnecting = .idle }
        var actions: [Action] = [.announce(.connected)]
        for (index, entry) in running.waiters.enumerated() {
            actions.append(.resume(entry.waiter, .success(()), index == 0 ? .rearm : .none))
        }
        return actions
    }

    /// bluetoothd answered the `Disconnect` of a stalled attempt (or did not).
    mutating func restartReplied(call: UInt64, device: Device, now: Instant) -> [Action] {
        guard var running = attempt, running.stage == .restarting(call: call) else { return [] }
        guard now < running.deadline else {
            return fail(BLEError(.timeout, message: "connecting timed out"), followUp: .disconnect)
        }
        running.number += 1
        attempt = running
        if device.connected, device.resolved { return resolved(device) }
        let next = makeID()
        running.stage = .calling(call: next, answered: false)
        attempt = running
        return [.sendConnect(call: next, deadline: running.deadline)]
    }

    /// A caller's task was cancelled.
    mutating func cancel(_ id: UInt64) -> [Action] {
        leave(id, with: .cancelledByTask)
    }

    /// A caller leaves before the attempt ends; the last one abandons it.
    private mutating func leave(_ id: UInt64, with error: BLEError) -> [Action] {
        guard var running = attempt, let index = running.waiters.firstIndex(where: { $0.id == id }) else {
            return []
        }
        let waiter = running.waiters.remove(at: index).waiter
        guard running.waiters.isEmpty else {
            attempt = running
            return [.resume(waiter, .failure(error), .none)]
        }
        attempt = nil
        if phase == .connecting { phase = .disconnected }
        return [.resume(waiter, .failure(error), .disconnect)]
    }

    /// The attempt failed: every caller learns it; the first one does the follow-up.
    private mutating func fail(_ error: BLEError, followUp: LinkFollowUp) -> [Action] {
        guard let running = attempt else { return [] }
        attempt = nil
        if phase == .connecting { phase = .disconnected }
        return running.waiters.enumerated().map { index, entry in
            .resume(entry.waiter, .failure(error), index == 0 ? followUp : .none)
        }
    }

    // MARK: Time

    /// A scheduled wake-up came. Wake-ups may come early (the bus connection closing fires
    /// them all); those before their time are ignored.
    mutating func timerFired(_ timer: Timer, due: Instant, now: Instant) -> [Action] {
        guard now >= due else { return [] }
        switch timer {
        case .deadline(let waiter):
            return leave(waiter, with: .timeout("connecting"))
        case .stall(let id):
            guard var running = attempt, running.id == id, running.number == 1, case .calling = running.stage
            else { return [] }
            let call = makeID()
            running.stage = .restarting(call: call)
            attempt = running
            return [.stalled, .restartLink(call: call)]
        case .settle(let call):
            guard let pending = disconnecting, pending.call == call, pending.answered else { return [] }
            return disconnectFinished()
        }
    }

    // MARK: Link loss and reconnection

    /// The link went down without ``disconnect(_:_:device:)`` finishing: pending operations
    /// fail now. `announce` false when the shell first waits to learn why (then
    /// ``announceLinkDown(_:)``). Nothing happens when the link was not up.
    mutating func linkDown(_ reason: DisconnectReason, announce: Bool) -> [Action] {
        guard isLinked else { return [] }
        let byUs = isDisconnecting
        phase = .disconnected
        var actions: [Action] = [.failOperations(reason)]
        if announce { actions += linkDownAnnounced(byUs ? .local : reason, byUs: byUs) }
        return actions
    }

    /// The reason of a loss reported with `announce: false` is known now.
    mutating func announceLinkDown(_ reason: DisconnectReason) -> [Action] {
        linkDownAnnounced(reason, byUs: false)
    }

    private mutating func linkDownAnnounced(_ reason: DisconnectReason, byUs: Bool) -> [Action] {
        var actions: [Action] = [.announce(.disconnected(reason))]
        if !byUs, policy.reconnects, reason != .deviceRemoved {
            actions += reconnectAttempt(1, lastFailure: .timeout)
        }
        return actions
    }

    private mutating func reconnectAttempt(_ number: Int, lastFailure: BLEError.Code) -> [Action] {
        if let limit = policy.maximumAttempts, number > limit {
            reconnecting = .idle
            return [.announce(.reconnectFailed(lastFailure))]
        }
        reconnecting = .waiting(attempt: number, lastFailure: lastFailure)
        return [.scheduleReconnect(attempt: number)]
    }

    /// The delay before reconnect attempt `number` has passed.
    mutating func reconnectDue(attempt number: Int) -> [Action] {
        guard case .waiting(number, let lastFailure) = reconnecting else { return [] }
        guard !isDisconnecting else {
            reconnecting = .idle
            return []
        }
        reconnecting = .running(attempt: number, lastFailure: lastFailure)
        return [.reconnect(attempt: number)]
    }

    /// Reconnect attempt `number` ended.
    mutating func reconnectFinished(attempt number: Int, _ result: Result<Void, BLEError>) -> [Action] {
        guard case .running(number, _) = reconnecting else { return [] }
        switch result {
        case .success:
            reconnecting = .idle
            return []
        case .failure(let error):
            // A restored link's first attempt is made whatever the policy; only a policy
            // that reconnects makes more.
            guard error.isTransient, policy.reconnects else {
                reconnecting = .idle
                return [.announce(.reconnectFailed(error.code))]
            }
            return reconnectAttempt(number + 1, lastFailure: error.code)
        }
    }

    /// A link the previous process kept (state restoration) is to come back: one attempt now,
    /// then more as the policy says. Nothing when a link or an attempt is there already.
    mutating func restore() -> [Action] {
        guard phase == .disconnected, attempt == nil, disconnecting == nil, reconnecting == .idle else { return [] }
        reconnecting = .running(attempt: 1, lastFailure: .disconnected)
        return [.announce(.reconnecting(attempt: 1, after: .zero)), .reconnect(attempt: 1)]
    }

    /// The reconnect policy changed.
    mutating func policyChanged(_ policy: ReconnectPolicy) -> [Action] {
        self.policy = policy
        guard !policy.reconnects, reconnecting != .idle else { return [] }
        reconnecting = .idle
        return [.stopReconnecting]
    }

    /// bluetoothd went away (or the bus did, said by `error`): an attempt fails, the link is down.
    mutating func daemonGone(_ error: BLEError = .bluetoothGone) -> [Action] {
        fail(error, followUp: .none) + linkDown(.bluetoothUnavailable, announce: true)
    }

    /// The device is linked by someone else and this peripheral takes the link up.
    mutating func reattached(_ device: Device) -> [Action] {
        if device.connected, phase == .disconnected, attempt == nil { phase = .connected }
        return []
    }

    // MARK: Disconnecting

    /// A caller asks for the link to go down. Reconnecting stops; a connect attempt under way
    /// fails (the `Disconnect` cancels BlueZ's pending `Connect`); callers asking while a
    /// `Disconnect` is under way share it.
    mutating func disconnect(_ id: UInt64, _ waiter: Waiter) -> [Action] {
        var actions: [Action] = []
        if reconnecting != .idle {
            reconnecting = .idle
            actions.append(.stopReconnecting)
        }
        if var pending = disconnecting, !pending.superseded {
            pending.waiters.append((id, waiter))
            disconnecting = pending
            return actions
        }
        let before = phase
        actions += fail(BLEError(.cancelled, message: "disconnect() was called while connecting"), followUp: .none)
        guard before != .disconnected else { return actions + [.resume(waiter, .success(()), .none)] }
        let call = makeID()
        disconnecting = Disconnecting(call: call, waiters: [(id, waiter)])
        phase = .disconnecting
        return actions + [.sendDisconnect(call: call)]
    }

    /// A disconnecting caller's task was cancelled: it leaves at once; the last one leaving
    /// ends the wait as a refused `Disconnect` would (bluetoothd may still act on the call,
    /// which then shows as a link loss).
    mutating func cancelDisconnect(_ id: UInt64, device: Device) -> [Action] {
        guard var pending = disconnecting, let index = pending.waiters.firstIndex(where: { $0.id == id }) else {
            return []
        }
        let waiter = pending.waiters.remove(at: index).waiter
        disconnecting = pending
        guard pending.waiters.isEmpty else { return [.resume(waiter, .failure(.cancelledByTask), .none)] }
        return disconnectRefused(device: device) + [.resume(waiter, .failure(.cancelledByTask), .none)]
    }

    /// The `Disconnect` under way ends without the link going down: the link is what
    /// bluetoothd says it is.
    private mutating func disconnectRefused(device: Device) -> [Action] {
        guard let pending = disconnecting else { return [] }
        var actions: [Action] = []
        if !pending.superseded, phase == .disconnecting {
            if device.connected {
                phase = .connected
            } else {
                actions += linkDown(.local, announce: true)
            }
        }
        disconnecting = nil
        return actions
    }

    /// bluetoothd answered `Disconnect`. Once it did, the mirror has until `now` plus the
    /// settle limit to see the link down (5.66 sends `Connected=false` after its reply).
    mutating func disconnectReplied(
        call: UInt64, _ result: Result<Void, BLEError>, device: Device, now: Instant, settleLimit: Duration
    ) -> [Action] {
        guard var pending = disconnecting, pending.call == call else { return [] }
        switch result {
        case .failure(let error):
            return disconnectRefused(device: device)
                + pending.waiters.map { .resume($0.waiter, .failure(error), .none) }
        case .success:
            guard device.connected, !pending.superseded else { return disconnectFinished() }
            pending.answered = true
            disconnecting = pending
            return [.schedule(.settle(call: call), at: now + settleLimit)]
        }
    }

    private mutating func disconnectFinished() -> [Action] {
        guard let pending = disconnecting else { return [] }
        var actions: [Action] = []
        if !pending.superseded, phase != .disconnected {
            phase = .disconnected
            actions += [.failOperations(.local), .announce(.disconnected(.local))]
        }
        disconnecting = nil
        return actions + pending.waiters.map { .resume($0.waiter, .success(()), .none) }
    }
}

/// What a caller resumed by ``ConnectionLifecycle`` still does before it returns or throws.
enum LinkFollowUp: Equatable, Sendable {
    case none
    /// Connected: re-arm the subscriptions and notify channels the peripheral had.
    case rearm
    /// Abandoned: send `Disconnect`, leaving no half-open link.
    case disconnect
    /// BlueZ cancelled the `Connect` though nobody here asked: if bluetoothd leaves the bus
    /// within a moment (it cancels pending connects as it exits), throw that it is gone;
    /// else send `Disconnect` and throw the error.
    case disconnectUnlessDaemonLeaves
}
