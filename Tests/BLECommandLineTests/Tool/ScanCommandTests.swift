import Foundation
import Testing

@testable import BLECommandLine

/// `ble scan` against the simulator: plain lines, filters, JSON lines, and the live table on a
/// pseudo-terminal. No scan is given a duration to show something within: a loaded machine can
/// spend any fixed time before the first report (1.5 s once went by with the monitor unlisted).
/// Each scan is stopped once what the test looks for is shown, by `--count` or by Ctrl-C.
@Suite(.serialized) struct ScanCommandTests {
    @Test func plainLinesNameServicesAndManufacturer() async throws {
        try await CLIFixture.run { fixture in
            let process = try ToolProcess(["scan"] + fixture.busArguments)
            try await process.waitUntil("both devices listed") { output, _ in
                output.contains(CLIFixture.monitor) && output.contains(CLIFixture.thermometer)
            }
            process.send(SIGINT)
            let outcome = try await process.finish()
            #expect(outcome.status == 0, "\(outcome.errors)")
            let monitor = try #require(outcome.output.split(separator: "\n").first { $0.hasPrefix(CLIFixture.monitor) })
            #expect(monitor.contains("\"Test HRM\""))
            #expect(monitor.contains("services: Heart Rate (180D)"))
            #expect(monitor.contains("manufacturer: Polar Electro (0x006B) 02 c2"))
            #expect(monitor.contains("-5"))
            #expect(outcome.output.contains(CLIFixture.thermometer))
            #expect(!outcome.output.contains("\u{1B}["), "no control characters in a pipe")
        }
    }

    /// Each filtered scan stops at its first report (`--count 1`), so nothing here waits on
    /// the clock: the one device reported must be the one the filter lets through (the other
    /// advertises as often, so a filter that let it through would show it first about half the
    /// time), and a later scan without `--count` still lists both.
    @Test func filtersByServiceNameAndRSSI() async throws {
        try await CLIFixture.run { fixture in
            for _ in 0..<3 {
                let byService = try await fixture.ble("scan", "--count", "1", "--duration", "120", "--service", "1809")
                #expect(byService.status == 0)
                #expect(byService.output.contains(CLIFixture.thermometer), "\(byService.output)")
                #expect(!byService.output.contains(CLIFixture.monitor))

                let byName = try await fixture.ble("scan", "--count", "1", "--duration", "120", "--name", "Test")
                #expect(byName.output.contains(CLIFixture.monitor), "\(byName.output)")
                #expect(!byName.output.contains(CLIFixture.thermometer))

                let byRSSI = try await fixture.ble("scan", "--count", "1", "--duration", "120", "--rssi", "-70")
                #expect(byRSSI.output.contains(CLIFixture.monitor), "\(byRSSI.output)")
                #expect(!byRSSI.output.contains(CLIFixture.thermometer))
            }
        }
    }

    @Test func countStopsAfterThatManyReports() async throws {
        try await CLIFixture.run { fixture in
            let both = try await fixture.ble("scan", "--plain", "--count", "2", "--duration", "120")
            #expect(both.status == 0)
            let lines = both.output.split(separator: "\n")
            #expect(lines.count == 2, "\(both.output)")
            // A device whose advertisement changed is reported again, so which two is not fixed.
            #expect(lines.allSatisfy { $0.contains(CLIFixture.monitor) || $0.contains(CLIFixture.thermometer) })
        }
    }

    @Test func jsonLines() async throws {
        try await CLIFixture.run { fixture in
            // Until the monitor's first report, however long a loaded machine takes to get there.
            let outcome = try await fixture.ble("scan", "--json", "--name", "Test", "--count", "1", "--duration", "120")
            #expect(outcome.status == 0)
            let objects = try outcome.output.split(separator: "\n").map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
            let monitor = try #require(objects.first { $0["address"] as? String == CLIFixture.monitor })
            #expect(monitor["name"] as? String == "Test HRM")
            #expect(monitor["adapter"] as? String == "hci0")
            #expect(monitor["services"] as? [String] == ["180D"])
            #expect(monitor["serviceNames"] as? [String: String] == ["180D": "Heart Rate"])
            #expect(monitor["manufacturerData"] as? [String: String] == ["0x006B": "02c2"])
            #expect((monitor["rssi"] as? Int).map { (-60)...(-40) ~= $0 } == true)
            #expect((monitor["time"] as? String)?.hasSuffix("Z") == true)
        }
    }

    @Test func liveTableOnAPseudoTerminal() async throws {
        try await CLIFixture.run { fixture in
            let process = try ToolProcess(["scan"] + fixture.busArguments, terminal: true, columns: 150)
            try await process.waitUntil("the monitor's row, redrawn twice") { screen, _ in
                screen.contains("Polar Electro (0x006B)") && screen.components(separatedBy: "F\u{1B}[J").count > 2
            }
            process.send(SIGINT)
            let outcome = try await process.finish()
            #expect(outcome.status == 0, "\(outcome.output)")
            let screen = outcome.output
            #expect(screen.hasPrefix("\u{1B}[?25l"), "the cursor is hidden while drawing")
            #expect(screen.hasSuffix("\u{1B}[?25h"), "and shown again at the end")
            #expect(screen.contains("NAME"))
            #expect(screen.contains("Test HRM"))
            #expect(screen.contains("Heart Rate (180D)"))
            #expect(screen.contains("Polar Electro (0x006B)"))
            #expect(screen.contains("scanned "))
            let redraws = screen.components(separatedBy: "F\u{1B}[J").count - 1
            #expect(redraws >= 2, "the table is redrawn in place")
            #expect(screen.contains("\u{1B}[1mNAME"), "the header is bold on a terminal")
            #expect(!screen.contains("\"Test HRM\""), "no plain lines on a terminal")
        }
    }

    @Test func noColorKeepsTheTableButDropsColours() async throws {
        try await CLIFixture.run { fixture in
            let process = try ToolProcess(
                ["scan"] + fixture.busArguments, environment: ["NO_COLOR": "1"], terminal: true)
            try await process.waitUntil("a redrawn table") { screen, _ in screen.contains("F\u{1B}[J") }
            process.send(SIGINT)
            let outcome = try await process.finish()
            #expect(outcome.status == 0)
            #expect(outcome.output.contains("NAME"))
            #expect(outcome.output.contains("F\u{1B}[J"))
            #expect(!outcome.output.contains("\u{1B}[1m"))
            #expect(!outcome.output.contains("\u{1B}[2m"))
        }
    }

    @Test func ctrlCEndsAScanCleanly() async throws {
        try await CLIFixture.run { fixture in
            let process = try ToolProcess(["scan"] + fixture.busArguments)
            try await process.waitUntil("a device listed") { output, _ in output.contains(CLIFixture.monitor) }
            process.send(SIGINT)
            let outcome = try await process.finish()
            #expect(outcome.status == 0)
            #expect(outcome.errors.isEmpty)
        }
    }

    @Test func theBusGoingAwayEndsAScanWithOneLineAndExitThree() async throws {
        try await CLIFixture.run { fixture in
            let process = try ToolProcess(["scan"] + fixture.busArguments)
            try await process.waitUntil("a device listed") { output, _ in output.contains(CLIFixture.monitor) }
            fixture.bus.stop()
            let outcome = try await process.finish()
            #expect(outcome.status == ExitCode.bluetoothUnavailable, "\(outcome.errors)")
            #expect(outcome.errors == "ble scan: error: the system bus went away (bluetoothUnavailable)\n")
        }
    }
}
