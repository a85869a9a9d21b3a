import Foundation
import Testing

@testable import BLE

/// State files written by the first version of restoration (peripherals as `hci0/AA:…` text)
/// and files naming the adapter by its address under another `hciN` name: both are taken up
/// on a private bus with the simulator, the peripheral reconnected under its current name.
@Suite("State restoration files", .timeLimit(.minutes(1)))
struct RestorationFileTests {
    static let sensor = NotificationTests.sensor
    static let adapterAddress = "00:1A:7D:DA:71:13"

    /// A state file for identifier `gateway` keeping the sensor under `id` (the JSON of a
    /// ``PeripheralID``, or its text as the first version wrote it).
    static func write(_ id: Any, to directory: URL) throws {
        var record = RestorationRecord(identifier: "gateway", adapter: "hci0")
        _ = record.connected(try PeripheralID(address: Self.sensor), policy: .init(.never))
        var json = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(record)) as? [String: Any])
        var kept = try #require(json["peripherals"] as? [[String: Any]])
        kept[0]["id"] = id
        json["peripherals"] = kept
        try JSONSerialization.data(withJSONObject: json).write(to: directory.appendingPathComponent("gateway.json"))
    }

    static func restoredSensor(_ directory: URL, _ fixture: SimulatorFixture) async throws -> Peripheral {
        let central = try await fixture.central(options: StateRestorationTests.options(directory))
        let restored = try #require(await central.restoredState)
        let peripheral = try #require(restored.peripherals.first)
        try await eventually("the kept peripheral is reconnected") { await peripheral.state == .connected }
        return peripheral
    }

    @Test("a file of the first version, its peripheral kept as text, is restored")
    func firstVersionFile() async throws {
        try await StateRestorationTests.run { fixture, directory in
            try Self.write("hci0/\(Self.sensor)", to: directory)
            let peripheral = try await Self.restoredSensor(directory, fixture)
            #expect(peripheral.id.adapterAddress == Self.adapterAddress, "named fully once bluetoothd is asked")
        }
    }

    @Test("a peripheral kept on adapter hci4 with this adapter's address is restored here, as hci0")
    func renamedAdapter() async throws {
        try await StateRestorationTests.run { fixture, directory in
            try Self.write(
                ["adapter": "hci4", "adapterAddress": Self.adapterAddress, "address": Self.sensor], to: directory)
            let peripheral = try await Self.restoredSensor(directory, fixture)
            #expect(peripheral.id.adapter == "hci0")
        }
    }

    @Test("a peripheral kept on another adapter is not restored, and is let go")
    func foreignAdapter() async throws {
        try await StateRestorationTests.run { fixture, directory in
            try Self.write(
                ["adapter": "hci0", "adapterAddress": "00:1A:7D:DA:71:99", "address": Self.sensor], to: directory)
            let central = try await fixture.central(options: StateRestorationTests.options(directory))
            #expect(await central.restoredState?.peripherals.isEmpty == true)
            await central.close()
            let again = try await fixture.central(options: StateRestorationTests.options(directory))
            #expect(await again.restoredState?.peripherals.isEmpty == true, "forgotten, not tried again")
            await again.close()
        }
    }
}
