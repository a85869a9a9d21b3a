import Testing

@testable import BLECommandLine

/// `--help` for every command, and the command-line mistakes (exit 2, one line saying what).
@Suite(.serialized) struct HelpAndUsageTests {
    @Test func toolHelpListsCommandsAndExitCodes() async throws {
        let outcome = try await ToolProcess.run(["--help"])
        #expect(outcome.status == 0)
        for command in ["scan", "explore", "read", "write", "notify", "serve", "sim", "demo"] {
            #expect(outcome.output.contains("\n  \(command) "), "\(command) missing from: \(outcome.output)")
        }
        #expect(outcome.output.contains("130  interrupted"))
        #expect(outcome.output.contains("--bus ADDRESS"))
    }

    @Test(arguments: ["scan", "explore", "read", "write", "notify", "serve", "sim", "demo"])
    func everyCommandHasHelp(command: String) async throws {
        let outcome = try await ToolProcess.run([command, "--help"])
        #expect(outcome.status == 0)
        #expect(outcome.output.hasPrefix("usage: ble \(command) [options]"))
        #expect(outcome.output.contains("--help"))
        if command != "sim" {
            #expect(outcome.output.contains("--bus ADDRESS"))
            #expect(outcome.output.contains("--adapter NAME"))
        }
        #expect(outcome.errors.isEmpty)
    }

    @Test func unknownCommand() async throws {
        let outcome = try await ToolProcess.run(["fly"])
        #expect(outcome.status == ExitCode.usage)
        #expect(
            outcome.errors
                == "ble: error: unknown command \"fly\"; commands: scan, devices, info, power, connect, disconnect, pair, unpair, trust, monitor, explore, read, write, notify, serve, sim, demo\n"
        )
    }

    @Test(arguments: [
        (["read", "C4:7C:8D:6A:11:22"], "ble read: error: missing <characteristic>"),
        (["scan", "--colour"], "ble scan: error: unknown option --colour"),
        (["scan", "--rssi", "loud"], "ble scan: error: --rssi wants a whole number from -127 to 20, not \"loud\""),
        (
            ["scan", "--bus", "nowhere"],
            "ble scan: error: --bus wants a D-Bus address such as unix:path=/run/dbus/system_bus_socket"
        ),
        (
            ["scan", "--duration", "0"],
            "ble scan: error: --duration wants a number of seconds greater than 0, not \"0\""
        ),
        (["read", "C4:7C:8D:6A:11:22", "2A38", "--format", "float"], "ble read: error: unknown format \"float\""),
        (["write", "C4:7C:8D:6A:11:22", "2A39", "zz"], "ble write: error: \"zz\" is not hex"),
        (
            ["write", "C4:7C:8D:6A:11:22", "2A39", "300", "--format", "uint8"],
            "ble write: error: \"300\" does not fit in uint8"
        ),
        (
            ["write", "C4:7C:8D:6A:11:22", "2A39", "01", "--type", "fast"],
            "ble write: error: --type is request, command or reliable"
        ),
        (["notify", "C4:7C:8D:6A:11:22", "180D/"], "ble notify: error: \"180D/\" is not a characteristic"),
        (["explore", "C4:7C:8D:6A:11:22", "--adapter", "usb0"], "ble explore: error: --adapter wants an adapter name"),
        (["notify", "C4:7C:8D:6A:11:22", "2A37", "--count", "0"], "ble notify: error: --count wants a whole number"),
        (["sim"], "ble sim: error: --scenario is required"),
        (["serve", "/nonexistent/spec.json"], "ble serve: error: cannot read /nonexistent/spec.json"),
    ])
    func mistakesExitTwoWithOneLine(arguments: [String], message: String) async throws {
        let outcome = try await ToolProcess.run(arguments)
        #expect(outcome.status == ExitCode.usage)
        let lines = outcome.errors.split(separator: "\n")
        #expect(lines.first?.hasPrefix(message) == true, "\(outcome.errors)")
        #expect(lines.count == 2)
        #expect(lines.last?.hasPrefix("usage: ble ") == true)
        #expect(outcome.output.isEmpty)
    }
}
