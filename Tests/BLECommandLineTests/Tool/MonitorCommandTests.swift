import BLE
import DBusTestSupport
import Foundation
import Testing

@testable import BLECommandLine

/// `ble monitor` against the simulator: what bluetoothd announces while another tool scans
/// and connects, as lines and as JSON; bluetoothd leaving; no bluetoothd at all.
@Suite(.serialized) struct MonitorCommandTests {
    static let address = CLIFixture.monitor

    @Test("a connection shows as the device added, its Connected change and its services added")
    func linesForAConnection() async throws {
        try await CLIFixture.run { fixture in
            let monitor = try ToolProcess(["monitor"] + fixture.busArguments)
            try await monitor.waitUntil("the monitor listening") { _, errors in errors.contains("monitoring bluetoothd")
            }
            _ = try await fixture.ble("connect", Self.address)
            try await monitor.waitUntil("the device added, connected, with its services") { output, _ in
                output.contains("[NEW] Device \(Self.address) Test HRM")
                    && output.contains("[CHG] Device \(Self.address) Connected: yes")
                    && output.contains("[NEW] Service \(Self.address) service")
                    && output.contains("Heart Rate")
            }
            _ = try await fixture.ble("disconnect", Self.address)
            try await monitor.waitUntil("the disconnection") { output, _ in
                output.contains("[CHG] Device \(Self.address) Connected: no")
            }
            monitor.send(SIGINT)
            let outcome = try await monitor.finish()
            #expect(outcome.status == ExitCode.interrupted || outcome.status == 0, "\(outcome.errors)")
        }
    }

    @Test("--json: one object per announcement; --count stops it; bluetoothd leaving is announced")
    func jsonAndCount() async throws {
        try await CLIFixture.run { fixture in
            let monitor = try ToolProcess(["monitor", "--json", "--count", "1000"] + fixture.busArguments)
            try await monitor.waitUntil("the monitor listening") { _, errors in errors.contains("monitoring bluetoothd")
            }
            _ = try await fixture.ble("connect", Self.address)
            try await monitor.waitUntil("a connected device") { output, _ in output.contains("\"Connected\":true") }
            // One snapshot of the output, its complete lines only: the monitor goes on writing,
            // and a second read (or a line still being written) would not match the first.
            let snapshot = monitor.output
            let lines = snapshot.split(separator: "\n").dropLast(snapshot.hasSuffix("\n") ? 0 : 1)
            let objects = lines.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            #expect(objects.count == lines.count, "every line is one object")
            let connected = try #require(
                objects.first { ($0["properties"] as? [String: Any])?["Connected"] as? Bool == true })
            #expect(connected["event"] as? String == "changed")
            #expect(connected["kind"] as? String == "device")
            #expect(connected["address"] as? String == Self.address)
            #expect(connected["interfaces"] as? [String] == ["org.bluez.Device1"])
            #expect(objects.allSatisfy { $0["time"] is String })

            // --count: a disconnection changes more than two things; the second line ends it.
            let counted = try ToolProcess(["monitor", "--count", "2"] + fixture.busArguments)
            try await counted.waitUntil("the monitor listening") { _, errors in errors.contains("monitoring bluetoothd")
            }
            _ = try await fixture.ble("disconnect", Self.address)
            let outcome = try await counted.finish()
            #expect(outcome.status == 0, "\(outcome.errors)")
            #expect(outcome.output.split(separator: "\n").count == 2, "\(outcome.output)")

            fixture.simulator.stop()
            try await monitor.waitUntil("bluetoothd leaving") { output, _ in output.contains("\"event\":\"left\"") }
            monitor.send(SIGINT)
            _ = try await monitor.finish()
        }
    }

    @Test("no bluetoothd on the bus: one line, status 3")
    func noBluetoothd() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let outcome = try await ToolProcess.run(["monitor", "--bus", bus.address])
        #expect(outcome.status == ExitCode.bluetoothUnavailable)
        #expect(
            outcome.errors
                == "ble monitor: error: bluetoothd is not running on bus \(bus.address) (bluetoothUnavailable)\n")
    }
}
