import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// Notify, Value and Statistics called from another connection, with a central that connected
/// and subscribed through raw BlueZ calls.
@Suite struct ControlValueMethodsTests {
    @Test func notifyReachesASubscribedCentralAndBecomesTheValue() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            let device = try await ControlHarness.connect(client)
            let path = try await ControlHarness.characteristicPath(
                client, device: device, uuid: ControlHarness.measurement)
            let changes = try await ControlHarness.propertyChanges(
                client, path: path, interface: BlueZInterface.gattCharacteristic1)
            try await ControlHarness.bluez(client, path, BlueZInterface.gattCharacteristic1, "StartNotify")
            let value = Data([0x00, 0x5A])
            let reply = try await ControlHarness.control(
                client, "Notify", [.string(ControlHarness.address), .string("2a37"), .bytes(value)])
            #expect(try reply.argument(0, as: UInt32.self) == 1)
            #expect(try await changes.next(changing: "Value") == .bytes(value))
            let stored = try await ControlHarness.control(
                client, "Value", [.string(ControlHarness.address), .string(ControlHarness.measurement)])
            #expect(try stored.argument(0, as: Data.self) == value)
        }
    }

    @Test func notifyWithoutSubscribersDeliversNothing() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            let reply = try await ControlHarness.control(
                client, "Notify", [.string(ControlHarness.address), .string("2A37"), .bytes(Data([1]))])
            #expect(try reply.argument(0, as: UInt32.self) == 0)
        }
    }

    @Test func notifyNamesUnknownPeripheralsAndCharacteristics() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            try await ControlHarness.controlError(
                client, "Notify", [.string("F0:00:00:00:00:09"), .string("2A37"), .bytes(Data([1]))],
                named: SimulatorControlError.unknownPeripheral)
            try await ControlHarness.controlError(
                client, "Notify", [.string(ControlHarness.address), .string("2A19"), .bytes(Data([1]))],
                named: SimulatorControlError.unknownCharacteristic)
        }
    }

    @Test func valueReadsTheInitialValue() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            let reply = try await ControlHarness.control(
                client, "Value", [.string(ControlHarness.address), .string("00002a38-0000-1000-8000-00805f9b34fb")])
            #expect(try reply.argument(0, as: Data.self) == Data([0x01]))
            try await ControlHarness.controlError(
                client, "Value", [.string(ControlHarness.address), .string("2A19")],
                named: SimulatorControlError.unknownCharacteristic)
        }
    }

    @Test func statisticsCountsWhatHappened() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            _ = try await ControlHarness.connect(client)
            let reply = try await ControlHarness.control(client, "Statistics")
            let statistics = try ObjectManagerCoding.decodeProperties(try #require(reply.body.first))
            #expect(statistics["connections"] == .uint64(1))
            #expect(statistics["peripherals"] == .uint32(1))
            let keys = ["advertisementsDelivered", "notificationsSent", "indicationsConfirmed", "gattOperations"]
            for key in keys { #expect(statistics[key] != nil, "missing \(key)") }
        }
    }
}
