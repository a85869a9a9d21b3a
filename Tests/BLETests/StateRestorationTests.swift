import BLE
import BLESimulator
import Foundation
import Testing

/// State restoration on a private bus with the simulator: a central kept under an identifier
/// is taken over by the next one (the process ending is a ``Central/close()`` here; a killed
/// process is in BLECommandLineTests), with its links, subscriptions and scan filter.
@Suite("State restoration", .timeLimit(.minutes(1)))
struct StateRestorationTests {
    static let sensor = NotificationTests.sensor

    /// A fresh directory for one test's state files.
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "swift-ble-restore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `body` on a bus with the simulator (the sensor, unless told otherwise) and a fresh
    /// state directory, removed afterwards (no central reads it before `body` makes one).
    static func run(
        options: SimulatorOptions = SimulatorOptions(), peripherals: [VirtualPeripheral] = [TestPeripherals.sensor()],
        _ body: (SimulatorFixture, URL) async throws -> Void
    ) async throws {
        let directory = try directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await SimulatorFixture.run(options: options, peripherals: peripherals) { fixture in
            try await body(fixture, directory)
        }
    }

    /// A first central under the identifier connects the sensor and subscribes to its heart
    /// rate; `more` does what else it should have done (what it returns is held until then);
    /// then it closes, as a process ending would: bluetoothd keeps the link.
    static func keepSensorSubscribed(
        _ fixture: SimulatorFixture, _ directory: URL,
        more: (Central, Peripheral) async throws -> Any? = { _, _ in nil }
    ) async throws -> PeripheralID {
        let first = try await fixture.central(options: options(directory))
        #expect(await first.restoredState == nil, "nothing was kept yet")
        try await first.waitUntilPoweredOn(timeout: .seconds(5))
        let id = try PeripheralID(address: sensor)
        let peripheral = try await first.connect(id, timeout: .seconds(5))
        let values = try await NotificationTests.rate(peripheral).subscribe()
        let held = try await more(first, peripheral)
        await first.close()
        withExtendedLifetime((values, held)) {}
        return id
    }

    static func options(_ directory: URL, _ identifier: String = "gateway") -> CentralOptions {
        var options = CentralOptions()
        options.restoreIdentifier = identifier
        options.restorationDirectory = directory
        return options
    }

    @Test("a link still up and its subscription are taken over; values since wait for the first iteration")
    func linkAndSubscriptionTakenOver() async throws {
        try await Self.run { fixture, directory in
            let id = try await Self.keepSensorSubscribed(fixture, directory) { first, peripheral in
                await peripheral.setReconnectPolicy(.exponentialBackoff(initial: .milliseconds(100)))
                var scanning = first.scan(services: [BluetoothUUID("180D")]).makeAsyncIterator()
                _ = try await scanning.next()
                return scanning
            }

            let second = try await fixture.central(options: Self.options(directory))
            let restored = try #require(await second.restoredState)
            #expect(restored.peripherals.map(\.id) == [id])
            #expect(await restored.peripherals.first?.state == .connected, "bluetoothd kept the link")
            #expect(restored.scanServices == [BluetoothUUID("180D")])
            let rate = try #require(restored.subscriptions.first)
            #expect(restored.subscriptions.count == 1)
            #expect(rate.uuid == BluetoothUUID("2A37"))
            #expect(await rate.isNotifying)
            try NotificationTests.notify(fixture, Data([7]))
            try NotificationTests.notify(fixture, Data([8]))
            #expect(try await collect(rate.notifications, count: 2) == [Data([7]), Data([8])])
            try await restored.peripherals[0].disconnect()
            await second.close()

            let third = try await fixture.central(options: Self.options(directory))
            let after = try #require(await third.restoredState)
            #expect(after.peripherals.isEmpty, "an explicit disconnect lets the peripheral go")
        }
    }

    @Test("a link bluetoothd dropped meanwhile is reconnected, and its subscription made again")
    func droppedLinkReconnected() async throws {
        try await Self.run { fixture, directory in
            _ = try await Self.keepSensorSubscribed(fixture, directory)
            try fixture.simulator.dropLink(address: Self.sensor)

            let second = try await fixture.central(options: Self.options(directory))
            let restored = try #require(await second.restoredState)
            let taken = try #require(restored.peripherals.first)
            #expect(restored.subscriptions.isEmpty, "the link is down: subscribing waits for it")
            try await eventually("the restored link is up") { await taken.state == .connected }
            let rate = try await NotificationTests.rate(taken)
            try await eventually("the subscription is made again") { await rate.isNotifying }
            try NotificationTests.notify(fixture, Data([9]))
            #expect(try await collect(rate.notifications, count: 1) == [Data([9])])
            await second.close()
        }
    }

    @Test("a second central with the identifier in use gets inProgress; after close it may take it")
    func identifierInUse() async throws {
        try await Self.run { fixture, directory in
            let first = try await fixture.central(options: Self.options(directory))
            let error = await #expect(throws: BLEError.self) {
                try await fixture.central(options: Self.options(directory))
            }
            #expect(error?.code == .inProgress)
            let other = try await fixture.central(options: Self.options(directory, "another"))
            await other.close()
            await first.close()
            let again = try await fixture.central(options: Self.options(directory))
            await again.close()
        }
    }

    @Test("a damaged state file is set aside and the central starts with nothing restored")
    func damagedFileSetAside() async throws {
        try await Self.run { fixture, directory in
            let file = directory.appendingPathComponent("gateway.json")
            try Data("{\"format\": \"swift-ble.restoration\", \"peripherals\": [".utf8).write(to: file)
            let central = try await fixture.central(options: Self.options(directory))
            #expect(await central.restoredState == nil)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(names.contains { $0.hasPrefix("gateway.json.damaged-") }, "\(names)")
            #expect(!names.contains("gateway.json"), "not read again")
            await central.close()
        }
    }

    @Test("a bad identifier is refused before the bus is touched")
    func badIdentifier() async throws {
        var options = CentralOptions()
        options.restoreIdentifier = "../escape"
        let error = await #expect(throws: BLEError.self) {
            try await Central(bus: .address("unix:path=/nonexistent/swift-ble-test"), options: options)
        }
        #expect(error?.code == .invalidArguments)
    }
}
