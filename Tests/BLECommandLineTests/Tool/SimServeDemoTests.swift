import Foundation
import Testing

@testable import BLECommandLine

/// `ble sim`, `ble serve` and `ble demo`.
@Suite(.serialized) struct SimServeDemoTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func simServesOtherClientsUntilCtrlC() async throws {
        let scenario = Self.root.appendingPathComponent("Scenarios/heart-rate-monitor.json").path
        let sim = try ToolProcess(["sim", "--scenario", scenario])
        try await sim.waitUntil("the address line") { output, _ in output.contains("\n") }
        let first = try #require(sim.output.split(separator: "\n").first)
        #expect(first.hasPrefix("DBUS_SYSTEM_BUS_ADDRESS=unix:"))
        let address = String(first.dropFirst("DBUS_SYSTEM_BUS_ADDRESS=".count))

        // Until the first heart-rate report, however long a loaded machine takes to get there.
        let scan = try await ToolProcess.run([
            "scan", "--bus", address, "--count", "1", "--duration", "120", "--service", "180D",
        ])
        #expect(scan.status == 0, "\(scan.errors)")
        #expect(scan.output.contains("Heart Rate (180D)"))
        // The same simulator through the system-bus default, as ble-sim's first line suggests.
        let viaEnvironment = try await ToolProcess.run(
            ["read", "--timeout", "5", scenarioMonitor(scenario), "2A38"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": address])
        #expect(viaEnvironment.status == 0, "\(viaEnvironment.errors)")

        sim.send(SIGINT)
        let outcome = try await sim.finish()
        #expect(outcome.status == 0)
        #expect(outcome.errors.contains("ble sim: bluetoothd 5.66 simulated with"))
    }

    @Test func bleSimIsTheSameProgram() async throws {
        let program = URL(fileURLWithPath: ToolProcess.binary).deletingLastPathComponent()
            .appendingPathComponent("ble-sim").path
        let help = try await ToolProcess(["--help"], program: program).finish()
        #expect(help.status == 0)
        #expect(help.output.hasPrefix("usage: ble-sim [options]\n"))
        #expect(help.output.contains("--scenario FILE"))
        let wrong = try await ToolProcess(["--nope"], program: program).finish()
        #expect(wrong.status == ExitCode.usage)
        #expect(wrong.errors.hasPrefix("ble-sim: error: unknown option --nope\nusage: ble-sim [options]"))
    }

    /// The first peripheral's address in a scenario file.
    private func scenarioMonitor(_ path: String) throws -> String {
        let object = try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(fileURLWithPath: path)))
        let peripherals = try #require((object as? [String: Any])?["peripherals"] as? [[String: Any]])
        return try #require(peripherals.first?["address"] as? String)
    }

    @Test func serveChecksASpec() async throws {
        let example = Self.root.appendingPathComponent("Examples/serve/heart-rate.json").path
        let outcome = try await ToolProcess.run(["serve", "--check", example])
        #expect(outcome.status == 0, "\(outcome.errors)")
        let lines = outcome.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "swift-ble heart rate  advertising: Heart Rate (180D)")
        #expect(lines.contains("├─ Heart Rate (180D)"))
        #expect(lines.contains("│  ├─ Heart Rate Measurement (2A37) [notify]  = 00 48  every 1000 ms, 4 value(s)"))
        #expect(
            lines.contains(
                "│  │  └─ descriptor Characteristic User Description (2901)  = 42 6f 64 79 20 53 65 6e 73 6f 72 20 4c 6f 63 61 74 69 6f 6e  \"Body Sensor Location\""
            ))
    }

    @Test func serveRejectsABadSpecNamingTheKey() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ble-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("bad.json")
        try Data(
            #"{"services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["reed"]}]}]}"#.utf8
        )
        .write(to: file)
        let outcome = try await ToolProcess.run(["serve", file.path])
        #expect(outcome.status == ExitCode.usage)
        #expect(
            outcome.errors.hasPrefix(
                "ble serve: error: \(file.path): services[0].characteristics[0].properties[0]: unknown property \"reed\""
            ))
    }

    @Test func demoNarratesTheWholePath() async throws {
        let outcome = try await ToolProcess.run(["demo", "--count", "3"])
        #expect(outcome.status == 0, "\(outcome.errors)")
        let text = outcome.output
        let steps = [
            "starting the embedded BlueZ simulator", "scanning for Heart Rate (180D)", "found Polar H10 (simulated)",
            "connecting", "connected and resolved in", "discovering services", "read Body Sensor Location: 01 (chest)",
            "subscribing to Heart Rate Measurement: 3 live values", "♥ 72 bpm", "wrote 01 to Heart Rate Control Point",
            "disconnected. That is the whole path",
        ]
        var position = text.startIndex
        for step in steps {
            let found = try #require(
                text.range(of: step, range: position..<text.endIndex), "\(step) missing or out of order")
            position = found.upperBound
        }
        #expect(text.components(separatedBy: "♥").count - 1 == 3)
    }

    @Test func demoOnAGivenBus() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("demo", "--count", "2")
            #expect(outcome.status == 0, "\(outcome.errors)")
            #expect(!outcome.output.contains("starting the embedded BlueZ simulator"))
            #expect(outcome.output.contains("found Test HRM C4:7C:8D:6A:11:22"))
            #expect(try fixture.simulator.value(address: CLIFixture.monitor, characteristic: "2A39") == Data([0x01]))
        }
    }

    @Test func demoSaysARealAdapterIsReachableButUsesItOnlyWhenAsked() async throws {
        try await CLIFixture.run { fixture in
            // The fixture's simulator stands in for the system's bluetoothd.
            let system = ["DBUS_SYSTEM_BUS_ADDRESS": fixture.bus.address]
            let simulated = try await ToolProcess.run(["demo", "--count", "1"], environment: system)
            #expect(simulated.status == 0, "\(simulated.errors)")
            #expect(simulated.output.contains("a real adapter is reachable (hci0); the demo uses the simulator anyway"))
            #expect(simulated.output.contains("found Polar H10 (simulated)"))
            #expect(fixture.simulator.statistics.connections == 0, "the real adapter was left alone")

            let real = try await ToolProcess.run(["demo", "--count", "1", "--real"], environment: system)
            #expect(real.status == 0, "\(real.errors)")
            #expect(!real.output.contains("simulator"))
            #expect(real.output.contains("found Test HRM"))
            #expect(fixture.simulator.statistics.connections == 1)
        }
    }

    @Test func demoWithRealButNoBluetoothd() async throws {
        let outcome = try await ToolProcess.run(["demo", "--real"])
        #expect(outcome.status == ExitCode.bluetoothUnavailable)
        #expect(outcome.errors.hasPrefix("ble demo: error: cannot reach the bus"), "\(outcome.errors)")
    }
}
