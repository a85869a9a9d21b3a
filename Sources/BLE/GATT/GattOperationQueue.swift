import DBus
import Foundation

/// The rules of one peripheral's GATT client, as a pure state machine: events in, actions out,
/// no I/O, no clock, no continuation resumed inside (``GattClient`` runs the actions).
///
/// - **One operation at a time**, in call order: BlueZ answers `InProgress` to a second one.
///   Writes without response are the exception: bluetoothd answers them as soon as it has
///   queued the packet and holds no operation open, so consecutive ones go out together, in
///   order, up to the pipeline window.
/// - **Deadlines count from the call**, also while an operation waits its turn; a queued one
///   whose deadline passes fails with ``BLEError/Code/timeout`` without being sent.
/// - **Cancellation** ends a queued operation at once, and the caller of the running one at
///   once; the running call's slot stays taken until bluetoothd answers it (BlueZ still runs
///   it), so the next operation is never sent into a busy attribute.
/// - **`InProgress`** (another client's operation on the attribute) is retried when that
///   operation visibly ends (a `Value` change on the same path, which the client sees while
///   the characteristic is subscribed) or after a doubling pause,
///   never past the deadline: no fixed-interval polling.
/// - **Read echoes**: bluetoothd sends `PropertiesChanged(Value)` with every read, just before
///   the reply (the client receives it only while the characteristic is subscribed); values
///   that arrive while a characteristic is read are held, the echo dropped, the rest delivered
///   as notifications in order.
/// - **Link loss** fails every operation, running and queued, at once.
/// - **The last value** of each characteristic (Core Bluetooth's `value`) is the newest one read
///   or notified, in the order they reached the client (reads of a part, from an offset, and
///   writes do not change it).
///
/// Generic over what it stores for the shell, so transcripts test it with plain values:
/// `Waiter` (a suspended caller), `Subscriber` (a notification iteration), `Request` (a call
/// to build) and `Reply`.
struct GattOperationQueue<Waiter, Subscriber, Request, Reply> {
    typealias Instant = MachineInstant

    /// What the shell must do, in order.
    enum Action {
        /// Send `request` to bluetoothd, answering by the deadline; report with ``finished(_:_:echo:now:)``.
        case send(id: UInt64, Request, deadline: Instant)
        /// Resume a caller.
        case resume(Waiter, Result<Reply, BLEError>)
        /// Hand a notified value to these subscribers.
        case deliver([Subscriber], Data)
        /// Call ``timerFired(now:)`` at this instant, in place of the wake-up asked for before.
        /// `generation` orders the wake-up actions, which the shell runs outside the machine's
        /// lock and so possibly out of order: the one with the highest generation is current.
        case wake(at: Instant, generation: UInt64)
        /// Nothing waits for time any more: the wake-up asked for is not needed. Left set, it
        /// would keep the connection's loop waking on a deadline for nothing.
        case disarm(generation: UInt64)
    }

    private struct Operation {
        let id: UInt64
        let request: Request
        /// The characteristic a read is of: its echo is filtered.
        let readPath: ObjectPath?
        /// The attribute, for `InProgress` retries.
        let path: ObjectPath
        let deadline: Instant
        /// Nil once the caller left; a sent call still holds the slot until it is answered.
        var waiter: Waiter?
        var attempts = 0
        /// Answered `InProgress`; sent again at this instant or on the path's next `Value`.
        var retryAt: Instant?
        /// A write without response: may be in flight beside others of its kind.
        let pipelined: Bool
    }

    /// How many writes without response may be in flight at once.
    let pipelineWindow: Int

    init(pipelineWindow: Int = 16) { self.pipelineWindow = max(1, pipelineWindow) }

    private var linkUp = false
    /// What ``readinessChange()`` last returned.
    private var toldReady = false
    /// What an operation submitted while the link is down fails with; nil: not connected (the
    /// error is made when needed, not at every link change).
    private var refusal: BLEError?
    /// Operations sent (or waiting to retry): one, or up to the window of writes without response.
    private var inFlight: [Operation] = []
    private var queue: [Operation] = []
    /// Ids handed out and not yet submitted, with whether cancellation came first.
    private var reserved: [IntegerKey: Bool] = [:]
    private var nextID: UInt64 = 1
    /// Values of the characteristic being read, held until its reply: (signal serial, value).
    private var held: [(serial: UInt32, value: Data)] = []
    /// Echoes of reads answered before their echo was seen, oldest first, by path.
    private var expectedEchoes: [ObjectPath: [(serial: UInt32, value: Data)]] = [:]
    /// What is kept per characteristic, in one entry so that a notification looks its path up
    /// once: the newest value and the subscribers.
    private var characteristics: [ObjectPath: CharacteristicEntry] = [:]
    /// The earliest wake-up asked for and not yet fired.
    private var armed: Instant?
    /// The generation of the last wake-up action (``Action/wake(at:generation:)``).
    private var wakeGeneration: UInt64 = 0

    private struct CharacteristicEntry {
        /// The newest value read or notified.
        var lastValue: Data?
        /// Notification subscribers: their ids and, in the same order, the subscribers
        /// themselves, kept as the array every delivery hands out (nothing is built per value).
        var ids: [UInt64] = []
        var targets: [Subscriber] = []
    }

    /// Keeps `value` as the newest of `entry`'s characteristic; returns who it goes to.
    private static func noting(_ value: Data, in entry: inout CharacteristicEntry) -> [Subscriber] {
        entry.lastValue = value
        return entry.targets
    }

    /// The pause before retry `attempt` (1, 2, …) after `InProgress`: 5 ms doubling to 160 ms.
    static func retryPause(attempt: Int) -> Duration { .milliseconds(5 << min(max(attempt - 1, 0), 5)) }

    // MARK: The link

    /// Whether the link is up and resolved, so operations may be sent. Going down this way
    /// fails nothing: see ``linkWentDown(_:)``.
    mutating func setLinkUp(_ up: Bool) {
        linkUp = up
        refusal = nil
    }

    /// While the link is down, operations fail with `error` instead of ``notConnected``: the
    /// link cannot come back before what `error` says is over (the bus went away).
    mutating func refuse(with error: BLEError) {
        if !linkUp { refusal = error }
    }

    private static var notConnected: BLEError { BLEError(.notConnected, message: "not connected") }

    /// The link is down: every operation fails with `error`; held values are delivered.
    mutating func linkWentDown(_ error: BLEError) -> [Action] {
        linkUp = false
        var actions: [Action] = []
        for operation in inFlight {
            if let waiter = operation.waiter { actions.append(.resume(waiter, .failure(error))) }
            if let path = operation.readPath { deliverHeld(path, into: &actions) }
        }
        inFlight.removeAll()
        for operation in queue { if let waiter = operation.waiter { actions.append(.resume(waiter, .failure(error))) } }
        queue.removeAll()
        expectedEchoes.removeAll()
        return actions + settleWake()
    }

    /// How many operations wait their turn (not sent yet), for tests that act on one queued.
    var queuedCount: Int { queue.count }

    // MARK: Readiness for writes without response

    /// Whether a write without response submitted now goes out at once (Core Bluetooth's
    /// `canSendWriteWithoutResponse`): the link is up, nothing waits its turn, and what is in
    /// flight leaves room in the window. Otherwise such a write waits in the queue, its caller
    /// suspended (cancellable, within its deadline), rather than piling up at bluetoothd.
    var acceptsWriteWithoutResponse: Bool {
        linkUp && queue.isEmpty && (inFlight.isEmpty || pipelineOpen)
    }

    /// ``acceptsWriteWithoutResponse`` when it changed since this last returned it, else nil:
    /// the shell asks after every event and tells its listeners when it became true.
    mutating func readinessChange() -> Bool? {
        let ready = acceptsWriteWithoutResponse
        guard ready != toldReady else { return nil }
        toldReady = ready
        return ready
    }

    // MARK: Operations

    /// An id for the next ``submit(_:request:path:isRead:deadline:waiter:now:)``, taken before
    /// the caller suspends so that a cancellation arriving first is remembered.
    mutating func reserve() -> UInt64 {
        let id = nextID
        nextID += 1
        reserved[IntegerKey(id)] = false
        return id
    }

    /// A caller suspended on operation `id`: sends it now if nothing runs, else queues it.
    mutating func submit(
        _ id: UInt64, request: Request, path: ObjectPath, isRead: Bool, pipelined: Bool = false, deadline: Instant,
        waiter: Waiter, now: Instant
    ) -> [Action] {
        guard let cancelled = reserved.removeValue(forKey: IntegerKey(id)) else {
            return [.resume(waiter, .failure(BLEError(.failed, message: "operation \(id) submitted twice")))]
        }
        if cancelled { return [.resume(waiter, .failure(.cancelledByTask))] }
        guard linkUp else { return [.resume(waiter, .failure(refusal ?? Self.notConnected))] }
        guard deadline > now else { return [.resume(waiter, .failure(Self.timeout(request)))] }
        let operation = Operation(
            id: id, request: request, readPath: isRead ? path : nil, path: path, deadline: deadline, waiter: waiter,
            pipelined: pipelined && !isRead)
        guard queue.isEmpty, mayStart(pipelined: operation.pipelined) else {
            queue.append(operation)
            return settleWake()
        }
        return start(operation)
    }

    /// bluetoothd answered operation `id` (or the call failed). `echo` is a read's value and
    /// the reply's serial.
    mutating func finished(
        _ id: UInt64, _ result: Result<Reply, BLEError>, echo: (value: Data, serial: UInt32)?, now: Instant
    ) -> [Action] {
        guard let index = Self.index(of: id, in: inFlight) else { return [] }
        if case .failure(let error) = result, error.code == .inProgress, inFlight[index].waiter != nil {
            inFlight[index].attempts += 1
            let retryAt = now + Self.retryPause(attempt: inFlight[index].attempts)
            if retryAt < inFlight[index].deadline {
                inFlight[index].retryAt = retryAt
                return settleWake()
            }
        }
        let operation = inFlight.remove(at: index)
        var actions: [Action] = []
        if let path = operation.readPath {
            if case .success = result, let echo {
                if let index = held.lastIndex(where: { $0.serial < echo.serial && $0.value == echo.value }) {
                    held.remove(at: index)
                } else if hasSubscribers(path) {
                    // Only a subscribed characteristic's changes reach the client (the others'
                    // echoes are not asked of the bus), so only there can one still come.
                    expectedEchoes[path, default: []].append((echo.serial, echo.value))
                }
            }
            deliverHeld(path, into: &actions)
        }
        if let waiter = operation.waiter { actions.append(.resume(waiter, result)) }
        actions += startNext(now: now)
        return actions + settleWake()
    }

    /// The caller of `id` left (task cancelled): it is resumed with
    /// ``BLEError/cancelledByTask`` at once, whether queued or running.
    mutating func cancel(_ id: UInt64, now: Instant) -> [Action] {
        if reserved[IntegerKey(id)] != nil {
            reserved[IntegerKey(id)] = true
            return []
        }
        if let index = Self.index(of: id, in: queue) {
            let operation = queue.remove(at: index)
            return (operation.waiter.map { [.resume($0, .failure(.cancelledByTask))] } ?? []) + settleWake()
        }
        guard let index = Self.index(of: id, in: inFlight), let waiter = inFlight[index].waiter else {
            return []
        }
        var actions: [Action] = [.resume(waiter, .failure(.cancelledByTask))]
        if inFlight[index].retryAt != nil {
            // Not in flight (waiting to retry): nothing holds the slot.
            let operation = inFlight.remove(at: index)
            if let path = operation.readPath { deliverHeld(path, into: &actions) }
            actions += startNext(now: now)
        } else {
            inFlight[index].waiter = nil
        }
        return actions + settleWake()
    }

    /// The wake-up asked for has come: retries due are sent, queued operations past their
    /// deadline fail.
    mutating func timerFired(now: Instant) -> [Action] {
        armed = nil
        var actions: [Action] = []
        var kept: [Operation] = []
        for operation in queue {
            if operation.deadline <= now, let waiter = operation.waiter {
                actions.append(.resume(waiter, .failure(Self.timeout(operation.request))))
            } else {
                kept.append(operation)
            }
        }
        queue = kept
        for index in inFlight.indices {
            guard let retryAt = inFlight[index].retryAt, retryAt <= now else { continue }
            inFlight[index].retryAt = nil
            actions.append(.send(id: inFlight[index].id, inFlight[index].request, deadline: inFlight[index].deadline))
        }
        return actions + settleWake()
    }

    // MARK: Values and subscribers

    /// A `Value` change of the characteristic at `path`, with the signal's serial.
    mutating func valueChanged(_ path: ObjectPath, _ value: Data, serial: UInt32) -> [Action] {
        // The echo of a read answered earlier: bluetoothd sends it before the reply, so it is
        // the first signal older than the reply with the read value (an equal notification
        // just before it is indistinguishable; dropping that one instead delivers the same
        // values). Replies older than this signal expect nothing any more.
        if var expected = expectedEchoes[path] {
            expected.removeAll { $0.serial < serial }
            let isEcho = expected.first?.value == value
            if isEcho { expected.removeFirst() }
            expectedEchoes[path] = expected.isEmpty ? nil : expected
            if isEcho { return [] }
        }
        let targets = Self.noting(value, in: &characteristics[path, default: CharacteristicEntry()])
        var actions: [Action] = []
        var retried = false
        for index in inFlight.indices where inFlight[index].path == path && inFlight[index].retryAt != nil {
            // Another client's operation on the attribute ended: try again now.
            inFlight[index].retryAt = nil
            actions.append(.send(id: inFlight[index].id, inFlight[index].request, deadline: inFlight[index].deadline))
            retried = true
        }
        if !retried, !inFlight.isEmpty, inFlight[0].readPath == path {
            held.append((serial, value))
            return []
        }
        if !targets.isEmpty { actions.append(.deliver(targets, value)) }
        return retried ? actions + settleWake() : actions
    }

    /// The common case of ``valueChanged(_:_:serial:)``, decided without building an action:
    /// when no read of `path` is under way, no echo of one is expected and nothing waits to
    /// retry on it, the value is the last one and goes to these subscribers (none: `[]`).
    /// `nil` otherwise, with nothing changed.
    mutating func plainDelivery(_ path: ObjectPath, _ value: Data) -> [Subscriber]? {
        guard expectedEchoes.isEmpty || expectedEchoes[path] == nil,
            !inFlight.indices.contains(where: { inFlight[$0].path == path })
        else { return nil }
        return Self.noting(value, in: &characteristics[path, default: CharacteristicEntry()])
    }

    /// A value the shell learnt outside the `Value` signals: a whole read's reply, an
    /// AcquireNotify datagram.
    mutating func notedValue(_ path: ObjectPath, _ value: Data) {
        characteristics[path, default: CharacteristicEntry()].lastValue = value
    }

    /// The newest value read or notified of the characteristic at `path`, if any.
    func lastValue(_ path: ObjectPath) -> Data? { characteristics[path]?.lastValue }

    /// Adds a notification subscriber; returns whether it is the first on `path`.
    @discardableResult
    mutating func subscribe(_ path: ObjectPath, id: UInt64, _ subscriber: Subscriber) -> Bool {
        let first = !hasSubscribers(path)
        Self.add(id, subscriber, to: &characteristics[path, default: CharacteristicEntry()])
        return first
    }

    private static func add(_ id: UInt64, _ subscriber: Subscriber, to entry: inout CharacteristicEntry) {
        entry.ids.append(id)
        entry.targets.append(subscriber)
    }

    /// Removes a subscriber; returns whether it was there.
    mutating func unsubscribe(_ path: ObjectPath, id: UInt64) -> Bool {
        guard let index = characteristics[path]?.ids.firstIndex(of: id) else { return false }
        characteristics[path]?.ids.remove(at: index)
        characteristics[path]?.targets.remove(at: index)
        return true
    }

    /// Removes and returns every subscriber of `path` (its characteristic is gone).
    mutating func removeSubscribers(of path: ObjectPath) -> [Subscriber] {
        guard let targets = characteristics[path]?.targets else { return [] }
        characteristics[path]?.ids = []
        characteristics[path]?.targets = []
        return targets
    }

    /// Whether `path` has subscribers.
    func hasSubscribers(_ path: ObjectPath) -> Bool { !(characteristics[path]?.ids.isEmpty ?? true) }

    // MARK: Helpers
    //
    // Operations are looked at in place (`inFlight[index].field`), never copied out to be
    // asked something: each copy retains what the operation holds, and with a full window of
    // writes without response a question about all of them per write cost more than the rest
    // of the write's bookkeeping.

    /// Where operation `id` is in `operations`.
    private static func index(of id: UInt64, in operations: [Operation]) -> Int? {
        operations.indices.first { operations[$0].id == id }
    }

    /// Whether a write without response may go out beside those in flight: the window has room
    /// and every one in flight is a write without response that was sent (none waits to retry).
    private var pipelineOpen: Bool {
        inFlight.count < pipelineWindow
            && !inFlight.indices.contains { !inFlight[$0].pipelined || inFlight[$0].retryAt != nil }
    }

    /// Whether an operation (a write without response: `pipelined`) may be sent now.
    private func mayStart(pipelined: Bool) -> Bool {
        inFlight.isEmpty || (pipelined && pipelineOpen)
    }

    private mutating func start(_ operation: consuming Operation) -> [Action] {
        if operation.readPath != nil { held.removeAll(keepingCapacity: true) }
        let send = Action.send(id: operation.id, operation.request, deadline: operation.deadline)
        inFlight.append(operation)
        return [send]
    }

    /// Starts queued operations in order while they may go (one, or consecutive writes without
    /// response up to the window); those past their deadline fail.
    private mutating func startNext(now: Instant) -> [Action] {
        var actions: [Action] = []
        while !queue.isEmpty {
            guard let waiter = queue[0].waiter else {
                queue.removeFirst()
                continue
            }
            if queue[0].deadline <= now {
                let expired = queue.removeFirst()
                actions.append(.resume(waiter, .failure(Self.timeout(expired.request))))
                continue
            }
            guard mayStart(pipelined: queue[0].pipelined) else { break }
            actions += start(queue.removeFirst())
        }
        return actions
    }

    private mutating func deliverHeld(_ path: ObjectPath, into actions: inout [Action]) {
        let values = held
        held.removeAll(keepingCapacity: true)
        guard let targets = characteristics[path]?.targets, !targets.isEmpty else { return }
        for entry in values { actions.append(.deliver(targets, entry.value)) }
    }

    /// Asks for a wake-up at the nearest retry or queued deadline, unless one at least as
    /// early is already asked for; withdraws the one asked for once nothing waits for time.
    private mutating func settleWake() -> [Action] {
        var nearest: Instant?
        for index in inFlight.indices {
            if let retryAt = inFlight[index].retryAt, nearest.map({ retryAt < $0 }) ?? true { nearest = retryAt }
        }
        for index in queue.indices where nearest.map({ queue[index].deadline < $0 }) ?? true {
            nearest = queue[index].deadline
        }
        guard let nearest else {
            guard armed != nil else { return [] }
            armed = nil
            wakeGeneration += 1
            return [.disarm(generation: wakeGeneration)]
        }
        guard armed.map({ nearest < $0 }) ?? true else { return [] }
        armed = nearest
        wakeGeneration += 1
        return [.wake(at: nearest, generation: wakeGeneration)]
    }

    private static func timeout(_ request: Request) -> BLEError {
        BLEError(.timeout, message: "the operation did not complete before its deadline")
    }
}
