import BLESimulator
import BlueZ
import Foundation
import Synchronization

/// The faults a soak injects while the workers run: error replies, delays past the SDK's
/// deadline, replies that never come, link drops (on demand and mid-operation), adapter power
/// cycles. (The bluetoothd restarts happen at fixed points of progress, see ``restart(at:)``.)
struct SoakChaos: Sendable {
    let world: SoakWorld

    /// Faults paced by the workers' progress (`done`: operations finished), not by the clock:
    /// one every few operations, and an adapter kept off for a few operations. Paced by time,
    /// a loaded machine (the whole suite under ThreadSanitizer) slowed the operations and not
    /// the faults, and the share of operations hit grew until the success floor failed.
    func run(using random: inout SeededGenerator, progress: SoakProgress) async {
        let plan = world.plan
        let simulator = world.simulator
        while !progress.finished.load(ordering: .relaxed) {
            await Self.wait(for: Int.random(in: 2...8, using: &random), operationsOf: progress)
            let index = Int.random(in: 0..<plan.peripherals, using: &random)
            let address = SoakPeripherals.address(index)
            // The fault clock moves before the fault acts, so that an operation it reaches
            // counts as touched.
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<70:
                let fault = Self.fault(for: address, plan: plan, using: &random)
                world.record.chaos("fault \(fault.operation.rawValue)")
                world.faults.touch(index, lasting: Self.actsLate(fault.action))
                simulator.inject(fault)
            case 70..<97:
                world.record.chaos("link drop")
                world.faults.touch(index)
                try? simulator.dropLink(address: address)
            default:
                world.record.chaos("power cycle")
                world.faults.touch(nil)
                simulator.setPowered(false)
                await Self.wait(for: Int.random(in: 1...6, using: &random), operationsOf: progress)
                simulator.setPowered(true)
                world.faults.touch(nil)
            }
        }
    }

    /// Returns once `count` more operations finished (or the run did).
    private static func wait(for count: Int, operationsOf progress: SoakProgress) async {
        await progress.waitUntilDone(progress.done.load(ordering: .relaxed) + count)
    }

    /// Restarts bluetoothd when operation `number` is one of the plan's restart points (evenly
    /// spread over the run), from the worker that drew it, while the other workers go on.
    func restart(at number: Int) async {
        let plan = world.plan
        let points = (1...max(1, plan.restarts)).map { plan.operations * $0 / (plan.restarts + 1) }
        guard plan.restarts > 0, points.contains(number) else { return }
        // One restart at a time: while bluetoothd is away operations fail fast, so the next
        // restart point can come before this restart is over.
        await world.restarts.lock()
        defer { world.restarts.unlock() }
        world.record.chaos("bluetoothd restart")
        world.faults.touch(nil)
        defer { world.faults.touch(nil) }
        do {
            try await world.simulator.restartDaemon(downtime: .milliseconds(200))
        } catch {
            world.record.chaos("restart failed: \(error)")
        }
        // bluetoothd powers its adapters at start (AutoEnable); the simulator keeps the stored
        // state, which a power cycle running across the restart may have left off.
        world.simulator.setPowered(true)
    }

    /// Whether a fault can still act after the operation it hit has ended.
    static func actsLate(_ action: SimulatedFault.Action) -> Bool {
        switch action {
        case .delay, .noReply: true
        case .fail, .attError, .dropLink: false
        }
    }

    static func fault(for address: String, plan: SoakPlan, using random: inout SeededGenerator) -> SimulatedFault {
        let operations: [SimulatedFault.Operation] = [.connect, .disconnect, .read, .write, .startNotify]
        let actions: [SimulatedFault.Action] = [
            .fail(name: "org.bluez.Error.Failed", message: "Operation failed"),
            .fail(name: "org.bluez.Error.NotPermitted", message: "Not permitted"),
            .attError(UInt8.random(in: 0x01...0x11, using: &random)),
            .delay(plan.callTimeout + .milliseconds(500)),
            .noReply,
            .dropLink,
        ]
        let operation = operations.randomElement(using: &random) ?? .read
        let action = actions.randomElement(using: &random) ?? .noReply
        return SimulatedFault(operation, address: address, action: action, count: 1)
    }
}
