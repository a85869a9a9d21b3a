import BlueZ
import DBus
import Foundation
import Synchronization

/// One call to bluetoothd that a GATT operation makes: built when it is sent.
///
/// A class: the queue machine and its actions pass it along several times per operation, and
/// copying a struct of strings and values retains each of them, an atomic operation apiece.
final class GattCall: Sendable {
    let path: ObjectPath
    let interface: InterfaceName
    let member: MemberName
    let arguments: [DBusValue]
    /// A characteristic's ReadValue: its `Value` echo is told apart from notifications.
    let isCharacteristicRead: Bool
    /// A characteristic's ReadValue from offset 0: its reply becomes the last value.
    let readsWholeValue: Bool
    /// A characteristic's write without response: may go beside others of its kind.
    let isPipelined: Bool

    init(
        path: ObjectPath, interface: InterfaceName, member: MemberName, arguments: [DBusValue],
        isCharacteristicRead: Bool = false, readsWholeValue: Bool = false, isPipelined: Bool = false
    ) {
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
        self.isCharacteristicRead = isCharacteristicRead
        self.readsWholeValue = readsWholeValue
        self.isPipelined = isPipelined
    }
}

/// Receives the `Value` changes of one device's characteristics, on the I/O thread.
protocol GattValueSink: AnyObject, Sendable {
    func valueChanged(_ path: ObjectPath, _ value: Data, serial: UInt32)
}

/// The shell around one peripheral's ``GattOperationQueue``: a lock for the machine, and the
/// actions run outside it.
///
/// A caller suspends once, on its own continuation; bluetoothd's reply (or a `Value` signal)
/// arrives on the bus connection's I/O thread and resumes it from there. No task is spawned
/// per operation, and nothing else waits for the link to drop: the machine fails the waiter
/// when the peripheral reports it.
final class GattClient: GattValueSink, Sendable {
    typealias Waiter = UnsafeContinuation<Result<DBusMessage, BLEError>, Never>
    typealias Machine = GattOperationQueue<Waiter, NotificationSubscriber, GattCall, DBusMessage>

    private let machine: PosixMutex<Machine>
    private let session: BlueZSession
    /// Told each time a write without response becomes able to go out at once.
    let readiness: EventBroadcast<Void>
    /// The AcquireNotify channels, by characteristic: each keeps its newest datagram until it is
    /// noted as the last value (see ``settleAcquired(_:)``), and how many there are, read before
    /// the dictionary so that a value over D-Bus takes no lock for them when there are none.
    /// (Held weakly: a channel holds its client.)
    let acquiredChannels = PosixMutex<[ObjectPath: WeakAcquiredChannel]>([:])
    let acquiredChannelCount = Atomic<Int>(0)
    /// The loop timer of the machine's current wake-up, if one is set.
    private let wakeTimer = PosixMutex(WakeTimerSlot())

    init(session: BlueZSession, pipelineWindow: Int) {
        self.session = session
        machine = PosixMutex(Machine(pipelineWindow: pipelineWindow))
        readiness = EventBroadcast(keepingLatest: 1, diagnostics: session.diagnostics)
    }

    /// Whether a write without response would go out at once (see
    /// ``GattOperationQueue/acceptsWriteWithoutResponse``).
    var acceptsWriteWithoutResponse: Bool { machine.withLock { $0.acceptsWriteWithoutResponse } }

    /// Runs an event's actions, then tells the readiness listeners when writes without
    /// response became able to go out at once: each event is fed to the machine with its
    /// ``GattOperationQueue/readinessChange()`` under one lock.
    private func run(_ outcome: (actions: [Machine.Action], ready: Bool?)) {
        run(outcome.actions)
        if outcome.ready == true { readiness.yield(()) }
    }

    // MARK: Operations

    /// Runs `call` in its turn, within `timeout` counted from now; ends on the reply, an error,
    /// the deadline, link loss or task cancellation, whichever comes first.
    nonisolated(nonsending) func perform(_ call: GattCall, timeout: Duration) async throws(BLEError) -> DBusMessage {
        let deadline = MachineInstant.now + timeout
        let id = machine.withLock { $0.reserve() }
        session.diagnostics.operationWillSuspend()
        // The continuation is unchecked: the machine resumes each waiter exactly once (it
        // lives in one operation, which leaves through one action), and the diagnostics
        // counters prove it in every bus test.
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { (waiter: Waiter) in
                run(
                    machine.withLock { machine in
                        let actions = machine.submit(
                            id, request: call, path: call.path, isRead: call.isCharacteristicRead,
                            pipelined: call.isPipelined, deadline: deadline, waiter: waiter, now: .now)
                        return (actions, machine.readinessChange())
                    })
            }
        } onCancel: {
            run(machine.withLock { machine in (machine.cancel(id, now: .now), machine.readinessChange()) })
        }
        session.diagnostics.operationDidResume()
        // The reply was decoded on the I/O thread before the machine's lock was taken to hand it
        // over; taking that lock once orders the caller's reads after those writes in a way
        // ThreadSanitizer sees (the runtime orders them too, in code it does not instrument, and
        // a reply that came before the caller had suspended was reported once as a race).
        machine.withLock { _ in }
        return try result.get()
    }

    func setLinkUp(_ up: Bool) {
        run(
            machine.withLock { machine -> ([Machine.Action], Bool?) in
                machine.setLinkUp(up)
                return ([], machine.readinessChange())
            })
    }

    /// Operations submitted while the link is down fail with `error` (see
    /// ``GattOperationQueue/refuse(with:)``).
    func refuse(with error: BLEError) { machine.withLock { $0.refuse(with: error) } }

    /// How many operations wait their turn (for tests).
    var queuedCount: Int { machine.withLock { $0.queuedCount } }

    func linkWentDown(_ error: BLEError) {
        run(machine.withLock { machine in (machine.linkWentDown(error), machine.readinessChange()) })
    }

    // MARK: Notifications

    func valueChanged(_ path: ObjectPath, _ value: Data, serial: UInt32) {
        settleAcquired(path)
        // Most values are plain notifications: handed over with no action built.
        let (targets, actions, ready) = machine.withLock {
            machine -> ([NotificationSubscriber], [Machine.Action], Bool?) in
            if let targets = machine.plainDelivery(path, value) { return (targets, [], nil) }
            // A value can end an InProgress wait, which frees the window.
            let actions = machine.valueChanged(path, value, serial: serial)
            return ([], actions, machine.readinessChange())
        }
        for subscriber in targets { subscriber.deliver(value) }
        run((actions, ready))
    }

    /// Records a value that came outside the bus (AcquireNotify) as the characteristic's last.
    func noteValue(_ path: ObjectPath, _ value: Data) { machine.withLock { $0.notedValue(path, value) } }

    /// The newest value read or notified of the characteristic at `path`.
    func lastValue(_ path: ObjectPath) -> Data? {
        settleAcquired(path)
        return machine.withLock { $0.lastValue(path) }
    }

    /// Adds a subscriber, whose values are delivered from now on.
    func subscribe(_ path: ObjectPath, _ subscriber: NotificationSubscriber) {
        _ = machine.withLock { $0.subscribe(path, id: subscriber.id, subscriber) }
    }

    /// Removes a subscriber; returns whether it was there.
    func unsubscribe(_ path: ObjectPath, id: UInt64) -> Bool {
        machine.withLock { $0.unsubscribe(path, id: id) }
    }

    func removeSubscribers(of path: ObjectPath) -> [NotificationSubscriber] {
        machine.withLock { $0.removeSubscribers(of: path) }
    }

    // MARK: Running actions

    private func run(_ actions: [Machine.Action]) {
        for action in actions {
            switch action {
            case .send(let id, let call, let deadline):
                send(id, call, deadline: deadline)
            case .resume(let waiter, let result):
                waiter.resume(returning: result)
            case .deliver(let subscribers, let value):
                for subscriber in subscribers { subscriber.deliver(value) }
            case .wake(let instant, let generation):
                // The deadlines the SDK promises for queued operations, and the pause before an
                // InProgress retry: time itself is what is waited for, only while an operation is
                // queued behind another or waits to retry. The loop's own timer runs the wake-up
                // on the I/O thread, with no task.
                let id = session.connection.schedule(after: instant - .now) { [self] in
                    run(machine.withLock { machine in (machine.timerFired(now: .now), machine.readinessChange()) })
                }
                replaceWakeTimer(generation: generation, with: id)
            case .disarm(let generation):
                replaceWakeTimer(generation: generation, with: nil)
            }
        }
    }

    /// Makes `id` the wake-up's timer (nil: none) and cancels the one no longer needed (see
    /// ``WakeTimerSlot``). A timer that fires anyway only makes the machine look at its
    /// deadlines again.
    private func replaceWakeTimer(generation: UInt64, with id: UInt64?) {
        let unneeded = wakeTimer.withLock { $0.apply(generation: generation, timer: id) }
        if let unneeded { session.connection.cancelScheduled(unneeded) }
    }

    private func send(_ id: UInt64, _ call: GattCall, deadline: MachineInstant) {
        session.startCall(
            call.path, call.interface, call.member, call.arguments, timeout: deadline - .now
        ) { [self] result in
            var echo: (value: Data, serial: UInt32)?
            if call.isCharacteristicRead, case .success(let reply) = result, case .bytes(let value)? = reply.body.first
            {
                echo = (value, reply.serial)
            }
            if call.readsWholeValue, echo != nil { settleAcquired(call.path) }
            run(
                machine.withLock { machine in
                    if call.readsWholeValue, let echo { machine.notedValue(call.path, echo.value) }
                    return (machine.finished(id, result, echo: echo, now: .now), machine.readinessChange())
                })
        }
    }
}
