import BLE
import BLESimulator
import Foundation

extension SoakWorld {
    /// After the chaos: every kind of operation on every peripheral with no fault anywhere,
    /// each of which must succeed with its value checked; the subscriptions kept through the
    /// run's reconnections and restarts must still be armed at the simulator (a value sent is
    /// delivered) and receive it. What chaos left behind shows here, where nothing excuses it.
    func quietRound() async {
        // Every fault that acts late plays out first: the simulator counts the actions it set
        // to run later (delayed replies, a Disconnect's own delay), and none is left.
        let simulator = self.simulator
        try? await eventually(within: .seconds(60), "the simulator's delayed actions ran") {
            simulator.delayedActions == 0
        }
        do throws(BLEError) {
            try await central.waitUntilPoweredOn(timeout: .seconds(10))
        } catch {
            return record.violation("quiet round: the central is not powered on after the chaos: \(error)")
        }
        for index in 0..<plan.peripherals {
            var random = SeededGenerator(seed: plan.seed &+ 3000 &+ UInt64(index))
            await run(.connect, on: index, using: &random, quiet: true)
            await ensureIndications(index, quiet: true)
            for operation in [SoakOperation.discover, .read, .writeWithResponse, .writeWithoutResponse, .subscribe] {
                await run(operation, on: index, using: &random, quiet: true)
            }
            for kind in [SoakPayload.Kind.notification, .indication] {
                let key = SoakStreams.Key(peripheral: index, kind: kind)
                guard armed.withLock({ $0[key] != nil }) else {
                    record.violation("quiet round: no \(kind) subscription armed on \(index)")
                    continue
                }
                for _ in 0..<3 where !streams.send(key, through: simulator) {
                    record.violation("quiet round: \(kind) subscription of \(index) is not armed at the simulator")
                }
            }
            for operation in [SoakOperation.cancel, .unsubscribe, .disconnect] {
                await run(operation, on: index, using: &random, quiet: true)
            }
        }
    }
}
