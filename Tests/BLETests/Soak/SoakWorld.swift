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
/// queue behind another worker's (only behind the SDK's own background StopNotify), and the
/// values a worker set or wrote are the ones the simulator holds when it checks them.
final class SoakWorld: Sendable {
    struct Slot {
        var peripheral: Peripheral?
        var subscriptions: [SoakSubscription] = []
        var indications: SoakSubscription?
        /// Payloads of writes that failed: one that timed out may still land later.
        var unconfirmedWrites: Set<SoakPayload> = []
    }

    let plan: SoakPlan
    let central: Central
    let simulator: Simulator
    let record = SoakRecord()
    let streams = SoakStreams()
    let faults = SoakFaultClock()
    /// How late the pacer woke up: the scheduling delay of the machine, measured.
    let lag = SchedulingLag()
    /// Serializes bluetoothd restarts.
    let restarts = AsyncLock()
    let slots: PosixMutex<[Int: Slot]> = PosixMutex([:])
    /// Subscriptions armed now, by characteristic: the indicator sends only where one listens.
    let armed = PosixMutex<[SoakStreams.Key: Int]>([:])
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

    /// Runs one operation, recording its outcome, whether a fault could have touched it (see
    /// ``SoakFaultClock``), and whether it overran its deadline: ended later than the deadline,
    /// the margin, and twice the worst scheduling lag the pacer measured meanwhile. Not a
    /// wall-clock bound of its own: a loaded machine delays the pacer's wake-ups as it delays
    /// the operation's, and raises the bound with them (a run beside the whole suite and two
    /// busy loops on 2 cores saw lags of 3.4 s, and operations end up to 2.4 s past their
    /// deadline within them); an operation that waits for what it must not wait for (a default
    /// deadline of 25 s, a reply that never comes) still overruns.
    func run(_ operation: SoakOperation, on index: Int, using random: inout SeededGenerator, quiet: Bool = false) async
    {
        let mark = lag.mark
        let clock = faults.now(index)
        let address = SoakPeripherals.address(index)
        let pending = simulator.pendingFaults.contains { $0.address == address }
        let linked = await peripheral(index)?.isConnected ?? false
        let ready = operation == .connect ? await central.state == .poweredOn : linked
        let start = ContinuousClock.now
        var outcome: String
        do throws(BLEError) {
            try await perform(operation, on: index, using: &random)
            outcome = "ok"
        } catch {
            outcome = "\(error.code)"
        }
        // A cancelled read is what the cancel operation is for.
        if operation == .cancel, outcome == "\(BLEError.Code.cancelled)" { outcome = "ok, cancelled" }
        let elapsed = ContinuousClock.now - start
        // A connect too: one right after a fault (a link drop, a restart the SDK has not seen
        // the end of yet) is what the fault did; once one connects untouched, the next are clean.
        // Only a connect that brought a link up: one on a link the SDK still had (a drop the
        // simulator made before it began, whose Connected=false had not reached the SDK yet)
        // returns at once, and that link then goes down under the next operation.
        let untouched = !pending && ready && faults.now(index) == clock && faults.isClean(index)
        if operation == .connect, outcome == "ok", !linked { faults.connected(index, untouchedSince: clock) }
        let deadline = operation == .connect ? plan.connectTimeout : plan.callTimeout
        let worstLag = lag.worst(since: mark)
        if elapsed > deadline + plan.margin + worstLag * 2 {
            record.overrun("\(operation) on \(index) took \(elapsed) (\(outcome)), scheduling lag \(worstLag)")
        }
        record.outcome(operation.rawValue, outcome, untouched: untouched, quiet: quiet, on: index)
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
            try await checkedRead(peripheral, index, kind: "read") { readable throws(BLEError) in
                try await readable.read(timeout: timeout)
            }
        case .writeWithResponse, .writeWithoutResponse:
            try await checkedWrite(peripheral, index, operation)
        case .subscribe:
            try await subscribe(peripheral, index, .notification)
        case .unsubscribe:
            if let subscription = slots.withLock({ $0[index]?.subscriptions.popLast() }) { await end(subscription) }
        case .disconnect:
            try await peripheral.disconnect()
        case .cancel:
            let pause = Int.random(in: 0...20, using: &random)
            try await checkedRead(peripheral, index, kind: "cancel") { readable throws(BLEError) in
                let task = Task { () -> Result<Data, BLEError> in
                    do throws(BLEError) { return .success(try await readable.read(timeout: timeout)) } catch {
                        return .failure(error)
                    }
                }
                try? await Task.sleep(for: .milliseconds(pause))
                task.cancel()
                return try await task.value.get()
            }
        }
    }

    /// The peripheral takes a fresh reading first (only this worker sets it): a read that
    /// succeeds must return exactly that.
    private func checkedRead(
        _ peripheral: Peripheral, _ index: Int, kind: String,
        _ read: (Characteristic) async throws(BLEError) -> Data
    ) async throws(BLEError) {
        let readable = try await characteristic(peripheral, SoakPeripherals.readable)
        let payload = SoakPayload(.read, peripheral: index, sequence: sequence.add(1, ordering: .relaxed).newValue)
        _ = try? simulator.setValue(address: SoakPeripherals.address(index), characteristic: "FFF1", payload.data)
        let value = try await read(readable)
        guard value == payload.data else {
            let shown = SoakPayload(value).map { "\($0)" } ?? "\(value.count) bytes"
            return record.violation("\(kind) of \(index) returned \(shown), the simulator holds \(payload)")
        }
        record.checked(kind)
    }

    /// Every write carries a fresh sequence number: one that succeeded must be what the
    /// simulator holds right after, unless an earlier write that failed (timed out) landed late.
    private func checkedWrite(_ peripheral: Peripheral, _ index: Int, _ operation: SoakOperation) async throws(BLEError)
    {
        let writable = try await characteristic(peripheral, SoakPeripherals.writable)
        let payload = SoakPayload(.write, peripheral: index, sequence: sequence.add(1, ordering: .relaxed).newValue)
        let type: WriteType = operation == .writeWithResponse ? .withResponse : .withoutResponse
        do throws(BLEError) {
            try await writable.write(payload.data, type: type, timeout: plan.callTimeout)
        } catch {
            slots.withLock { _ = $0[index, default: Slot()].unconfirmedWrites.insert(payload) }
            throw error
        }
        let held = (try? simulator.value(address: SoakPeripherals.address(index), characteristic: "FFF2")) ?? nil
        let late = held.flatMap(SoakPayload.init).map { old in
            slots.withLock { $0[index]?.unconfirmedWrites.contains(old) ?? false }
        }
        guard held == payload.data || late == true else {
            let shown = held.flatMap(SoakPayload.init).map { "\($0)" } ?? "\(held?.count ?? 0) bytes"
            return record.violation("\(operation) of \(payload) succeeded, the simulator holds \(shown)")
        }
        record.checked(operation.rawValue)
    }

    func characteristic(_ peripheral: Peripheral, _ uuid: BluetoothUUID) async throws(BLEError) -> Characteristic {
        try await peripheral.characteristic(uuid, in: SoakPeripherals.service)
    }
}
