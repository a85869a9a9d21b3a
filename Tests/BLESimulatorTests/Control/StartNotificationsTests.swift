import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// Stamped notification runs, over D-Bus and from Swift, received by a central that connected
/// and called StartNotify with raw BlueZ calls.
@Suite struct StartNotificationsTests {
    /// Connects, subscribes to the measurement's PropertiesChanged, then calls StartNotify;
    /// returns the reader.
    private func subscribe(_ client: Connection) async throws -> ControlSignalReader {
        let device = try await ControlHarness.connect(client)
        let path = try await ControlHarness.characteristicPath(client, device: device, uuid: ControlHarness.measurement)
        let changes = try await ControlHarness.propertyChanges(
            client, path: path, interface: BlueZInterface.gattCharacteristic1)
        try await ControlHarness.bluez(client, path, BlueZInterface.gattCharacteristic1, "StartNotify")
        return changes
    }

    /// The stamped values of the next `count` `Value` changes.
    private func receive(_ count: Int, from changes: ControlSignalReader) async throws -> [(StampedNotification, Int)] {
        var received: [(StampedNotification, Int)] = []
        while received.count < count {
            guard case .bytes(let value)? = try await changes.next(changing: "Value") else {
                throw HarnessError("only \(received.count) of \(count) notifications arrived")
            }
            received.append((try #require(StampedNotification(value)), value.count))
        }
        return received
    }

    @Test func startNotificationsOverDBusDeliversEveryValueInOrder() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            let changes = try await subscribe(client)
            let sent = StampedNotification.monotonicNow()
            try await ControlHarness.control(
                client, "StartNotifications",
                [
                    .string(ControlHarness.address), .string(ControlHarness.measurement), .uint32(50), .uint32(0),
                    .uint32(20),
                ])
            let received = try await receive(50, from: changes)
            let now = StampedNotification.monotonicNow()
            #expect(received.map(\.0.sequence) == Array(0..<50))
            #expect(received.allSatisfy { $0.1 == 20 })
            let stamps = received.map(\.0.timestamp)
            #expect(stamps == stamps.sorted())
            #expect(stamps.allSatisfy { $0 >= sent && $0 <= now })
        }
    }

    @Test func startNotificationsKeepsTheInterval() async throws {
        try await ControlHarness.withSimulator { _, simulator, client in
            let changes = try await subscribe(client)
            let before = StampedNotification.monotonicNow()
            let delivered = try await simulator.startNotifications(
                address: ControlHarness.address, characteristic: ControlHarness.measurement, count: 5,
                interval: .milliseconds(20), payload: 12)
            #expect(delivered == 5)
            let stamps = try await receive(5, from: changes).map(\.0.timestamp)
            // Value n is due n intervals after the start and never leaves early (a stall on a
            // loaded machine may bunch them later, so only the lower bound is checked).
            for (index, stamp) in stamps.enumerated() {
                #expect(stamp - before >= UInt64(index) * 20_000_000, "value \(index)")
            }
        }
    }

    // The run alone lasts 1,000 s: within the time limit, only the cancellation can end it.
    @Test(.timeLimit(.minutes(1))) func cancellingARunStopsIt() async throws {
        try await ControlHarness.withSimulator { _, simulator, _ in
            let run = Task {
                try await simulator.startNotifications(
                    address: ControlHarness.address, characteristic: ControlHarness.measurement, count: 1_000,
                    interval: .seconds(1))
            }
            try await Task.sleep(for: .milliseconds(50))
            run.cancel()
            // Nobody is subscribed, so nothing was delivered; what matters is that it returned.
            #expect(try await run.value == 0)
        }
    }

    @Test func startNotificationsChecksItsArguments() async throws {
        try await ControlHarness.withSimulator { _, simulator, client in
            let address = DBusValue.string(ControlHarness.address)
            try await ControlHarness.controlError(
                client, "StartNotifications", [address, .string("2A37"), .uint32(1), .uint32(0), .uint32(4)],
                named: SimulatorControlError.invalidArguments)
            try await ControlHarness.controlError(
                client, "StartNotifications", [address, .string("2A37"), .uint32(1), .uint32(0), .uint32(513)],
                named: SimulatorControlError.invalidArguments)
            try await ControlHarness.controlError(
                client, "StartNotifications", [address, .string("2A19"), .uint32(1), .uint32(0), .uint32(20)],
                named: SimulatorControlError.unknownCharacteristic)
            try await ControlHarness.controlError(
                client, "StartNotifications",
                [.string("F0:00:00:00:00:09"), .string("2A37"), .uint32(1), .uint32(0), .uint32(20)],
                named: SimulatorControlError.unknownPeripheral)
            await #expect(throws: DBusError.self) {
                try await simulator.startNotifications(
                    address: ControlHarness.address, characteristic: ControlHarness.measurement, count: -1)
            }
        }
    }
}
