import BLESimulator
import DBus
import Testing

/// `RequestSecurity(s address, s level)` over D-Bus and `Simulator.requestSecurity` in Swift:
/// the same names for the same failures.
@Suite struct RequestSecurityTests {
    @Test func aConnectedPeripheralStartsPairingAndTheCountIsReturned() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            _ = try await ControlHarness.connect(client)
            let reply = try await ControlHarness.control(
                client, "RequestSecurity", [.string(ControlHarness.address), .string("authenticated")])
            #expect(reply.body == [.uint32(1)])
        }
    }

    @Test func unknownNotConnectedAndBadLevelAreNamed() async throws {
        try await ControlHarness.withSimulator { _, simulator, client in
            _ = try await ControlHarness.controlError(
                client, "RequestSecurity", [.string("00:11:22:33:44:55"), .string("encrypted")],
                named: SimulatorControlError.unknownPeripheral)
            _ = try await ControlHarness.controlError(
                client, "RequestSecurity", [.string(ControlHarness.address), .string("encrypted")],
                named: SimulatorControlError.invalidArguments)
            _ = try await ControlHarness.controlError(
                client, "RequestSecurity", [.string(ControlHarness.address), .string("secure")],
                named: SimulatorControlError.invalidArguments)
            let swift = #expect(throws: DBusError.self) {
                try simulator.requestSecurity(address: ControlHarness.address, level: .authenticated)
            }
            #expect(swift?.name == SimulatorControlError.invalidArguments)
        }
    }
}
