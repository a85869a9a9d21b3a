import BLE
import Foundation
import Testing

/// State restoration across a process that was killed: `ble notify --restore-id` runs as a
/// child process and gets SIGKILL mid-stream (no cleanup runs, the kernel drops its lock); a
/// second child, or a central in this process, then takes the link and the subscription over.
@Suite(.serialized) struct RestorationAfterKillTests {
    /// Starts `ble notify --restore-id gateway` on the monitor's heart rate and kills it with
    /// SIGKILL once it printed a value; the link stays up.
    static func killedNotifier(_ fixture: CLIFixture, _ directory: URL) async throws {
        let process = try ToolProcess(
            ["notify"] + fixture.busArguments
                + ["--restore-id", "gateway", "--state-dir", directory.path, CLIFixture.monitor, "2A37"])
        try await process.waitUntil("a value") { output, _ in !output.isEmpty }
        process.send(SIGKILL)
        let outcome = try await process.finish()
        #expect(outcome.status != 0, "killed, not ended")
        #expect(try await fixture.isConnected(CLIFixture.monitor), "bluetoothd keeps the link of a process that left")
    }

    @Test func aSecondProcessTakesOverFromAKilledOne() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "swift-ble-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await CLIFixture.run { fixture in
            try await Self.killedNotifier(fixture, directory)
            let second = try ToolProcess(
                ["notify"] + fixture.busArguments
                    + [
                        "--restore-id", "gateway", "--state-dir", directory.path, "--count", "2", CLIFixture.monitor,
                        "2A37",
                    ])
            let outcome = try await second.finish()
            #expect(outcome.status == 0, "\(outcome.errors)")
            #expect(
                outcome.errors.contains("restored under gateway: 1 peripheral, 1 subscription"), "\(outcome.errors)")
            #expect(outcome.output.split(separator: "\n").count == 2, "\(outcome.output)")

            // The second process ended by disconnecting: nothing is kept any more.
            var options = CentralOptions()
            options.restoreIdentifier = "gateway"
            options.restorationDirectory = directory
            let central = try await Central(bus: .address(fixture.bus.address), options: options)
            #expect(await central.restoredState?.peripherals.isEmpty == true)
            await central.close()
        }
    }

    @Test func aKilledProcessLinkAndSubscriptionAreTakenOver() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "swift-ble-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await CLIFixture.run { fixture in
            try await Self.killedNotifier(fixture, directory)
            var options = CentralOptions()
            options.restoreIdentifier = "gateway"
            options.restorationDirectory = directory
            let central = try await Central(bus: .address(fixture.bus.address), options: options)
            let restored = try #require(await central.restoredState)
            #expect(restored.peripherals.map(\.id.address) == [CLIFixture.monitor])
            let rate = try #require(restored.subscriptions.first)
            #expect(rate.uuid == BluetoothUUID("2A37"))
            var values = rate.notifications.makeAsyncIterator()
            #expect(await values.next() != nil, "the monitor's notifications reach the new process")
            try await restored.peripherals[0].disconnect()
            await central.close()
        }
    }
}
