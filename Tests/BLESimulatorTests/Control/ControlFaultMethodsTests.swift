import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// InjectFault, ClearFaults, DropLink and SetPowered called from another connection.
@Suite struct ControlFaultMethodsTests {
    private static let failNextConnect = """
        {"operation": "connect", "address": "C4:7C:8D:6A:11:22",
         "action": {"fail": {"name": "org.bluez.Error.Failed", "message": "le-connection-abort-by-local"}}}
        """

    @Test func injectedFaultFailsTheNextConnectOnly() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            let device = try await ControlHarness.discover(client)
            try await ControlHarness.control(client, "InjectFault", [.string(Self.failNextConnect)])
            let error = await #expect(throws: DBusError.self) {
                try await ControlHarness.bluez(client, device, BlueZInterface.device1, "Connect")
            }
            #expect(error?.name == BlueZErrorName.failed)
            #expect(error?.message == "le-connection-abort-by-local")
            try await ControlHarness.bluez(client, device, BlueZInterface.device1, "Connect")
        }
    }

    @Test func clearFaultsDropsPendingFaults() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            let device = try await ControlHarness.discover(client)
            try await ControlHarness.control(client, "InjectFault", [.string(Self.failNextConnect)])
            try await ControlHarness.control(client, "ClearFaults")
            try await ControlHarness.bluez(client, device, BlueZInterface.device1, "Connect")
        }
    }

    @Test func injectFaultRejectsJSONOutsideTheSchema() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            let unknownOperation = #"{"operation": "teleport", "action": "noReply"}"#
            let error = try await ControlHarness.controlError(
                client, "InjectFault", [.string(unknownOperation)], named: SimulatorControlError.invalidJSON)
            #expect(error.message.contains("operation"))
            try await ControlHarness.controlError(
                client, "InjectFault", [.string("not json")], named: SimulatorControlError.invalidJSON)
        }
    }

    @Test func dropLinkTakesTheLinkDownAfterTheDelay() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            let device = try await ControlHarness.connect(client)
            let changes = try await ControlHarness.propertyChanges(
                client, path: device, interface: BlueZInterface.device1)
            let clock = ContinuousClock()
            let start = clock.now
            try await ControlHarness.control(client, "DropLink", [.string(ControlHarness.address), .uint32(60)])
            #expect(try await changes.next(changing: "Connected") == .boolean(false))
            // A lower bound only: the drop never comes early, and load only delays it.
            #expect(clock.now - start >= .milliseconds(60))
        }
    }

    @Test func dropLinkNamesUnknownPeripherals() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            try await ControlHarness.controlError(
                client, "DropLink", [.string("F0:00:00:00:00:09"), .uint32(0)],
                named: SimulatorControlError.unknownPeripheral)
        }
    }

    /// One `PropertiesChanged` per change: the second signal read must be the power coming
    /// back, not a duplicate of the first (the regression fixed in `Simulator.setPowered`).
    @Test func setPoweredTurnsTheAdapterOffAndOnOnce() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            let changes = try await ControlHarness.propertyChanges(
                client, path: ControlHarness.adapter, interface: BlueZInterface.adapter1)
            try await ControlHarness.control(client, "SetPowered", [.uint32(0), .boolean(false)])
            #expect(try await changes.next(changing: "Powered") == .boolean(false))
            let powered = try await ControlHarness.bluez(
                client, ControlHarness.adapter, .properties, "Get",
                [.string(BlueZInterface.adapter1.rawValue), .string("Powered")])
            #expect(powered.body.first?.unwrappingVariant == .boolean(false))
            try await ControlHarness.control(client, "SetPowered", [.uint32(0), .boolean(true)])
            #expect(try await changes.next(changing: "Powered") == .boolean(true))
        }
    }

    @Test func setPoweredNamesUnknownAdapters() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            try await ControlHarness.controlError(
                client, "SetPowered", [.uint32(1), .boolean(false)], named: SimulatorControlError.unknownAdapter)
        }
    }
}
