import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// ATT allows one indication in flight per bearer: the peer sends the next only once the
/// confirmation came back, a connection event later (Core Vol 3 Part F 3.4.7.2). bluetoothd
/// confirms each one as it arrives; the simulator paces indications by
/// ``SimulatorOptions/indicationConfirmDelay``.
@Suite("Fidelity: indications paced by confirmations", .timeLimit(.minutes(1)))
struct IndicationPacingFidelityTests {
    private static let characteristic = BlueZInterface.gattCharacteristic1
    private static let confirmDelay: Duration = .milliseconds(150)

    private static var pacedOptions: SimulatorOptions {
        var options = SimulatorOptions()
        options.indicationConfirmDelay = confirmDelay
        return options
    }

    @Test("Back-to-back indications arrive in order, one confirmation delay apart", arguments: Release.allCases)
    func indicationsWaitForConfirmations(release: Release) async throws {
        try await Fidelity.run(release, options: Self.pacedOptions, peripherals: [Peripherals.sensor()]) {
            simulator, client, _ in
            try await client.connectSensor()
            try await client.call(Paths.indicate, Self.characteristic, "StartNotify")
            let mark = client.transcript.mark
            let before = simulator.statistics
            let clock = ContinuousClock()
            let start = clock.now
            for byte: UInt8 in 1...3 {
                // Each is accepted at once: the peer queues what it cannot send yet.
                let sent = try simulator.notify(
                    address: Peripherals.sensorAddress, characteristic: UUIDs.indicate, value: Data([byte]))
                #expect(sent == 1)
            }
            let values = try await client.transcript.count(3, "three indications", since: mark) {
                $0.isPropertiesChanged(Paths.indicate, Self.characteristic) && $0.changedProperties["Value"] != nil
            }
            // The third waited for two confirmations; only a lower bound can be relied on.
            #expect(clock.now - start >= Self.confirmDelay * 2)
            #expect(values.map { $0.changedProperties["Value"] } == [1, 2, 3].map { .bytes(Data([$0])) })
            try await waitUntil { simulator.statistics.indicationsConfirmed - before.indicationsConfirmed == 3 }
            #expect(simulator.statistics.notificationsSent - before.notificationsSent == 3)
        }
    }

    @Test("The queue of a link that drops is discarded", arguments: Release.allCases)
    func queueGoesWithTheLink(release: Release) async throws {
        // Long enough that 2 and 3 are still queued when the link goes, however loaded the machine.
        var options = SimulatorOptions()
        options.indicationConfirmDelay = .seconds(5)
        try await Fidelity.run(release, options: options, peripherals: [Peripherals.sensor()]) {
            simulator, client, _ in
            try await client.connectSensor()
            try await client.call(Paths.indicate, Self.characteristic, "StartNotify")
            let mark = client.transcript.mark
            for byte: UInt8 in 1...3 {
                try simulator.notify(
                    address: Peripherals.sensorAddress, characteristic: UUIDs.indicate, value: Data([byte]))
            }
            try await client.call(Paths.sensor, BlueZInterface.device1, "Disconnect")
            // The subscription comes back with the link (bluetoothd re-enables it); a value pushed
            // now goes out at once instead of queueing behind 2 and 3, which died with the old link.
            try await client.connectAndResolve()
            try simulator.notify(address: Peripherals.sensorAddress, characteristic: UUIDs.indicate, value: Data([4]))
            try await client.transcript.first("the indication on the new link", since: mark) {
                $0.isPropertiesChanged(Paths.indicate, Self.characteristic)
                    && $0.changedProperties["Value"] == .bytes(Data([4]))
            }
            let delivered = client.transcript.since(mark).filter {
                $0.isPropertiesChanged(Paths.indicate, Self.characteristic) && $0.changedProperties["Value"] != nil
            }
            let values = delivered.compactMap { $0.changedProperties["Value"] }
            #expect(!values.contains(.bytes(Data([3]))), "\(client.transcript.lines(since: mark))")
        }
    }

    @Test("Without a confirmation delay indications are confirmed at once", arguments: Release.allCases)
    func unpacedByDefault(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            try await client.call(Paths.indicate, Self.characteristic, "StartNotify")
            let before = simulator.statistics
            for byte: UInt8 in 1...3 {
                try simulator.notify(
                    address: Peripherals.sensorAddress, characteristic: UUIDs.indicate, value: Data([byte]))
            }
            #expect(simulator.statistics.indicationsConfirmed - before.indicationsConfirmed == 3)
        }
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + Fidelity.eventDeadline
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("condition not met before the deadline")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
