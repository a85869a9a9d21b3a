import BLE
import BLESimulator
import DBus
import Foundation
import Synchronization

/// The operations a soak worker performs.
enum SoakOperation: String, CaseIterable, Sendable {
    case connect, discover, read, writeWithResponse, writeWithoutResponse, subscribe, unsubscribe, disconnect, cancel
}

/// The soak's shared state: one central, the simulator, and what each peripheral has open.
/// Each worker owns a disjoint set of peripherals, so one peripheral's operations never
/// queue behind another worker's (only behind the SDK's own background StopNotify).
final class SoakWorld: Sendable {
    private struct Slot {
        var peripheral: Peripheral?
        var subscriptions: [Task<Void, Never>] = []
        var indications: Task<Void, Never>?
    }

    let plan: SoakPlan
    let central: Central
    let simulator: Simulator
    let record = SoakRecord()
    /// How late the pacer woke up: the scheduling delay of the machine, measured.
    let lag = SchedulingLag()
    /// Serializes bluetoothd restarts.
    let restarts = AsyncLock()
    private let slots: PosixMutex<[Int: Slot]> = PosixMutex([:])
    /// Peripherals whose indication subscription is live, for the indicator to pick from.
    private let indicating = PosixMutex<Set<Int>>([])
    private let sequence = Atomic<UInt32>(0)
    private let steps = PosixMutex<[Int: (String, ContinuousClock.Instant)]>([:])

    init(plan: SoakPlan, central: Central, simulator: Simulator) {
        self.plan = plan
        self.central = central
        self.simulator = simulator
    }

    func peripheral(_ index: Int) -> Peripheral? { slots.withLock { $0[index]?.peripheral } }

    /// Notes what `worker` does now (nil: nothing more), for a stall report.
    func doing(_ worker: Int, _ step: String?) {
        steps.withLock { $0[worker] = step.map { ($0, ContinuousClock.now) } }
    }

    /// What each worker is doing, and for how long.
    var inFlight: String {
        let now = ContinuousClock.now
        return steps.withLock { steps in
            steps.keys.sorted().compactMap { worker in
                steps[worker].map { "worker \(worker): \($0.0) for \(now - $0.1)" }
            }.joined(separator: "; ")
        }
    }

    // MARK: Operations

    /// Runs one operation, recording its outcome and whether it overran its deadline: ended
    /// later than the deadline, the margin, and twice the worst scheduling lag the pacer
    /// measured meanwhile. Not a wall-clock bound of its own: a loaded machine delays the
    /// pacer's wake-ups as it delays the operation's, and raises the bound with them (a run
    /// beside the whole suite and two busy loops on 2 cores saw lags of 3.4 s, and operations
    /// end up to 2.4 s past their deadline within them); an operation that waits for what it
    /// must not wait for (a default deadline of 25 s, a reply that never comes) still overruns.
    func run(_ operation: SoakOperation, on index: Int, using random: inout SeededGenerator) async {
        let mark = lag.mark
        let start = ContinuousClock.now
        let outcome: String
        do throws(BLEError) {
            try await perform(operation, on: index, using: &random)
            outcome = "ok"
        } catch {
            outcome = "\(error.code)"
        }
        let elapsed = ContinuousClock.now - start
        let deadline = operation == .connect ? plan.connectTimeout : plan.callTimeout
        let worstLag = lag.worst(since: mark)
        if elapsed > deadline + plan.margin + worstLag * 2 {
            record.overrun("\(operation) on \(index) took \(elapsed) (\(outcome)), scheduling lag \(worstLag)")
        }
        record.outcome(operation.rawValue, outcome)
        if outcome == "\(BLEError.Code.bluetoothUnavailable)" || outcome == "\(BLEError.Code.poweredOff)" {
            // As an app would: no busy loop while bluetoothd or the adapter is away.
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    private func perform(
        _ operation: SoakOperation, on index: Int, using random: inout SeededGenerator
    ) async throws(BLEError) {
        guard let peripheral = peripheral(index), operation != .connect else {
            if operation != .connect { throw BLEError(.notConnected, message: "never connected") }
            let peripheral = try await central.connect(
                try PeripheralID(address: SoakPeripherals.address(index)), timeout: plan.connectTimeout)
            slots.withLock { $0[index, default: Slot()].peripheral = peripheral }
            return
        }
        let timeout = plan.callTimeout
        switch operation {
        case .connect:
            return
        case .discover:
            _ = try await peripheral.discoverServices()
        case .read:
            _ = try await characteristic(peripheral, SoakPeripherals.readable).read(timeout: timeout)
        case .writeWithResponse, .writeWithoutResponse:
            let value = Data([UInt8.random(in: 0...255, using: &random)])
            let type: WriteType = operation == .writeWithResponse ? .withResponse : .withoutResponse
            try await characteristic(peripheral, SoakPeripherals.writable).write(value, type: type, timeout: timeout)
        case .subscribe:
            let values = try await characteristic(peripheral, SoakPeripherals.notifying).subscribe()
            let task = Task { for await _ in values {} }
            slots.withLock { $0[index, default: Slot()].subscriptions.append(task) }
        case .unsubscribe:
            let task = slots.withLock { $0[index]?.subscriptions.popLast() }
            task?.cancel()
        case .disconnect:
            try await peripheral.disconnect()
        case .cancel:
            let readable = try await characteristic(peripheral, SoakPeripherals.readable)
            let task = Task { () -> Result<Data, BLEError> in
                do throws(BLEError) { return .success(try await readable.read(timeout: timeout)) } catch {
                    return .failure(error)
                }
            }
            try? await Task.sleep(for: .milliseconds(Int.random(in: 0...20, using: &random)))
            task.cancel()
            _ = try await task.value.get()
        }
    }

    private func characteristic(_ peripheral: Peripheral, _ uuid: BluetoothUUID) async throws(BLEError)
        -> Characteristic
    {
        try await peripheral.characteristic(uuid, in: SoakPeripherals.service)
    }

    // MARK: Indications

    /// Keeps one indication subscription per connected peripheral for the whole run (it ends
    /// only when the services go, e.g. at a bluetoothd restart, and is then made again).
    func ensureIndications(_ index: Int) async {
        guard let peripheral = peripheral(index), indicating.withLock({ !$0.contains(index) }),
            await peripheral.isConnected
        else { return }
        let values: NotificationSequence
        do throws(BLEError) {
            values = try await characteristic(peripheral, SoakPeripherals.indicating).subscribe()
        } catch {
            record.outcome("indication subscription", "\(error.code)")
            return
        }
        record.outcome("indication subscription", "ok")
        indicating.withLock { _ = $0.insert(index) }
        let task = Task { [self] in
            for await value in values where value.count == 4 {
                record.received(value.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
            }
            indicating.withLock { _ = $0.remove(index) }
        }
        slots.withLock { $0[index, default: Slot()].indications = task }
    }

    /// Sends one indication with a fresh sequence number from a random subscribed peripheral;
    /// remembers it when the simulator delivered it.
    func indicate(using random: inout SeededGenerator) {
        guard let index = indicating.withLock({ $0.randomElement(using: &random) }) else { return }
        var number = sequence.add(1, ordering: .relaxed).newValue
        let value = withUnsafeBytes(of: &number) { Data($0) }
        let delivered =
            (try? simulator.notify(address: SoakPeripherals.address(index), characteristic: "FFF4", value: value)) ?? 0
        if delivered > 0 { record.confirmed(number) }
    }

    // MARK: Cleanup

    /// Ends every subscription and disconnects every peripheral.
    func tearDown() async {
        let all = slots.withLock { slots in
            defer { slots.removeAll() }
            return Array(slots.values)
        }
        for slot in all {
            for task in slot.subscriptions { task.cancel() }
            slot.indications?.cancel()
            _ = try? await slot.peripheral?.disconnect()
        }
    }
}

/// A lock that suspends instead of blocking.
final class AsyncLock: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = PosixMutex(State())

    func lock() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state in
                if state.held {
                    state.waiters.append(waiter)
                    return false
                }
                state.held = true
                return true
            }
            if acquired { waiter.resume() }
        }
    }

    func unlock() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}

/// How late a plain timer wakes up while the soak runs: the pacer sleeps for ``interval`` again
/// and again and records by how much each sleep overran. That is what the machine's load (the
/// rest of the suite, other processes) adds to every wake-up of every task.
final class SchedulingLag: Sendable {
    static let interval: Duration = .milliseconds(10)

    private struct State {
        var samples: [Duration] = []
        var sleepingSince: ContinuousClock.Instant?
    }

    private let state = PosixMutex(State())

    /// Where the samples to come start.
    var mark: Int { state.withLock { $0.samples.count } }

    /// The worst lag since `mark`, counting the pacer's sleep under way if it overran already.
    func worst(since mark: Int) -> Duration {
        let now = ContinuousClock.now
        return state.withLock { state in
            var worst = state.samples[min(mark, state.samples.count)...].max() ?? .zero
            if let since = state.sleepingSince { worst = max(worst, now - since - Self.interval) }
            return worst
        }
    }

    /// Sleeps and records, until `finished`.
    func pace(until finished: @Sendable () -> Bool) async {
        while !finished() {
            let start = ContinuousClock.now
            state.withLock { $0.sleepingSince = start }
            try? await Task.sleep(for: Self.interval)
            let lag = ContinuousClock.now - start - Self.interval
            state.withLock { state in
                state.sleepingSince = nil
                state.samples.append(max(lag, .zero))
            }
        }
    }
}
