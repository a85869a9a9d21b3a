import BLE
import BLESimulator
import Foundation

extension SoakWorld {
    /// After the chaos: every kind of operation on every peripheral with no fault anywhere,
    /// each of which must succeed with its value checked; the subscriptions kept through the
    /// run's reconnections and restarts must still be armed at the simulator (a value sent is
    /// delivered) and receive it. What chaos left behind shows here, where nothing excuses it.
    func quietRound() async {
        // Every fault that acts late has played out by then: the longest delay is the call
        // deadline and 500 ms, a Disconnect's own delay comes on top, and some slack.
        try? await Task.sleep(
            for: plan.callTimeout + .milliseconds(500) + simulator.options.disconnectDelay + .seconds(1))
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
