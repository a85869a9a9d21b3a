import BLESimulator
import DBus
import Foundation
import Testing

/// AddPeripheral, RemovePeripheral and UpdatePeripheral called from another connection.
@Suite struct ControlPeripheralMethodsTests {
    private static let beaconJSON = #"{"address": "F0:00:00:00:00:01", "name": "Beacon", "connectable": false}"#

    @Test func addPeripheralPutsItInRange() async throws {
        try await ControlHarness.withSimulator { _, simulator, client in
            try await ControlHarness.control(client, "AddPeripheral", [.string(Self.beaconJSON)])
            let added = simulator.peripherals.first { $0.address == "F0:00:00:00:00:01" }
            #expect(added?.name == "Beacon")
            #expect(added?.connectable == false)
        }
    }

    @Test func addPeripheralRejectsMalformedJSON() async throws {
        try await ControlHarness.withSimulator { _, simulator, client in
            try await ControlHarness.controlError(
                client, "AddPeripheral", [.string("{")], named: SimulatorControlError.invalidJSON)
            #expect(simulator.peripherals.count == 1)
        }
    }

    @Test func addPeripheralNamesTheMissingField() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            let error = try await ControlHarness.controlError(
                client, "AddPeripheral", [.string(#"{"name": "no address"}"#)], named: SimulatorControlError.invalidJSON
            )
            #expect(error.message.contains("address"))
        }
    }

    @Test func addPeripheralRejectsAPeripheralItCannotServe() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            let json = #"{"address": "F0:00:00:00:00:02", "services": [{"uuid": "not-a-uuid"}]}"#
            try await ControlHarness.controlError(
                client, "AddPeripheral", [.string(json)], named: SimulatorControlError.invalidArguments)
            try await ControlHarness.controlError(
                client, "AddPeripheral", [.string(#"{"address": "nowhere"}"#)],
                named: SimulatorControlError.invalidArguments)
        }
    }

    @Test func removePeripheralTakesItOutOfRange() async throws {
        try await ControlHarness.withSimulator { _, simulator, client in
            try await ControlHarness.control(client, "RemovePeripheral", [.string(ControlHarness.address)])
            #expect(simulator.peripherals.isEmpty)
            try await ControlHarness.controlError(
                client, "RemovePeripheral", [.string(ControlHarness.address)],
                named: SimulatorControlError.unknownPeripheral)
        }
    }

    @Test func malformedAddressIsInvalidArguments() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            try await ControlHarness.controlError(
                client, "RemovePeripheral", [.string("zz")], named: SimulatorControlError.invalidArguments)
        }
    }

    @Test func updatePeripheralReplacesTheDescription() async throws {
        try await ControlHarness.withSimulator { _, simulator, client in
            var changed = ControlHarness.monitor
            changed.name = "Renamed"
            changed.rssi = -80
            let json = String(decoding: try JSONEncoder().encode(changed), as: UTF8.self)
            try await ControlHarness.control(
                client, "UpdatePeripheral", [.string(ControlHarness.address.lowercased()), .string(json)])
            #expect(simulator.peripherals == [changed])
        }
    }

    @Test func updatePeripheralRefusesAnotherAddressOrAnUnknownOne() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            try await ControlHarness.controlError(
                client, "UpdatePeripheral", [.string(ControlHarness.address), .string(Self.beaconJSON)],
                named: SimulatorControlError.invalidArguments)
            try await ControlHarness.controlError(
                client, "UpdatePeripheral", [.string("F0:00:00:00:00:01"), .string(Self.beaconJSON)],
                named: SimulatorControlError.unknownPeripheral)
            try await ControlHarness.controlError(
                client, "UpdatePeripheral", [.string(ControlHarness.address), .string("[]")],
                named: SimulatorControlError.invalidJSON)
        }
    }

    @Test func wrongArgumentTypesAreRefusedByTheBus() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            try await ControlHarness.controlError(
                client, "RemovePeripheral", [.uint32(1)], named: DBusError.StandardName.invalidArgs)
        }
    }
}
