import BLESimulator
import BlueZ
import DBus
import Testing

/// `Simulator.dropLink(address:after:)` from Swift.
@Suite struct DropLinkTests {
    @Test func theLinkGoesDownAfterTheDelayWithTheReason() async throws {
        try await ControlHarness.withSimulator(profile: .v5_87) { _, simulator, client in
            let device = try await ControlHarness.connect(client)
            let disconnected = ControlSignalReader(
                try await client.signals(
                    matching: MatchRule(
                        sender: BlueZService.busName, path: device, interface: BlueZInterface.device1,
                        member: BlueZSignal.disconnected)))
            let clock = ContinuousClock()
            let start = clock.now
            try simulator.dropLink(address: ControlHarness.address, after: .milliseconds(40), reason: .remote)
            let signal = try #require(await disconnected.next())
            #expect(try signal.argument(0, as: String.self) == DisconnectReason.remote.name)
            // A lower bound only: the drop never comes early, and load only delays it.
            #expect(clock.now - start >= .milliseconds(40))
        }
    }

    @Test func aRestartCancelsThePendingDrop() async throws {
        try await ControlHarness.withSimulator { _, simulator, client in
            _ = try await ControlHarness.connect(client)
            try simulator.dropLink(address: ControlHarness.address, after: .milliseconds(30))
            try await simulator.restartDaemon()
            // The new daemon's device came back from storage, disconnected; connect it again and
            // check the old timer does not take the new link down.
            let device = try BlueZPath.device(address: ControlHarness.address, adapter: ControlHarness.adapter)
            try await ControlHarness.bluez(client, device, BlueZInterface.device1, "Connect")
            try await Task.sleep(for: .milliseconds(100))
            let connected = try await ControlHarness.bluez(
                client, device, .properties, "Get", [.string(BlueZInterface.device1.rawValue), .string("Connected")])
            #expect(connected.body.first?.unwrappingVariant == .boolean(true))
        }
    }

    @Test func badArgumentsAreNamed() async throws {
        try await ControlHarness.withSimulator { _, simulator, _ in
            let unknown = #expect(throws: DBusError.self) {
                try simulator.dropLink(address: "F0:00:00:00:00:09", after: .zero)
            }
            #expect(unknown?.name == SimulatorControlError.unknownPeripheral)
            let negative = #expect(throws: DBusError.self) {
                try simulator.dropLink(address: ControlHarness.address, after: .milliseconds(-1))
            }
            #expect(negative?.name == SimulatorControlError.invalidArguments)
        }
    }
}
