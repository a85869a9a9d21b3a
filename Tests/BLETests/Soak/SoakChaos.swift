import BLESimulator
import BlueZ
import Foundation
import Synchronization

/// The faults a soak injects while the workers run: error replies, delays past the SDK's
/// deadline, replies that never come, link drops (on demand and mid-operation), adapter power
/// cycles, and bluetoothd restarts at fixed points of progress.
struct SoakChaos: Sendable {
    let world: SoakWorld
    let done: @Sendable () -> Int

    func run(using random: inout SeededGenerator, until finished: @Sendable () -> Bool) async {
        let plan = world.plan
        let simulator = world.simulator
        var restartsLeft = plan.restarts
        while !finished() {
            try? await Task.sleep(for: .milliseconds(Int.random(in: 5...40, using: &random)))
            let progress = done()
            if restartsLeft > 0, progress * (plan.restarts + 1) >= plan.operations * (plan.restarts + 1 - restartsLeft) {
                restartsLeft -= 1
                world.record.chaos("bluetoothd restart")
                try? await simulator.restartDaemon(downtime: .milliseconds(200))
                continue
            }
            let address = SoakPeripherals.address(Int.random(in: 0..<plan.peripherals, using: &random))
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<70:
                let fault = Self.fault(for: address, plan: plan, using: &random)
                world.record.chaos("fault \(fault.operation.rawValue)")
                simulator.inject(fault)
            case 70..<97:
                world.record.chaos("link drop")
                try? simulator.dropLink(address: address)
            default:
                world.record.chaos("power cycle")
                simulator.setPowered(false)
                try? await Task.sleep(for: .milliseconds(Int.random(in: 20...150, using: &random)))
                simulator.setPowered(true)
            }
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
