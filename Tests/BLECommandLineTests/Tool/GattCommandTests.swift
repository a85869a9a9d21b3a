import BLESimulator
import Foundation
import Testing

@testable import BLECommandLine

/// `ble explore`, `read`, `write` and `notify` against the simulator.
@Suite(.serialized) struct GattCommandTests {
    static let monitor = CLIFixture.monitor

    @Test func exploreprintsTheTreeWithValues() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("explore", Self.monitor)
            #expect(outcome.status == 0, "\(outcome.errors)")
            let lines = outcome.output.split(separator: "\n").map(String.init)
            #expect(lines.first == "Test HRM  \(Self.monitor)")
            #expect(lines.contains("├─ Heart Rate (180D)"))
            #expect(lines.contains("│  ├─ Heart Rate Measurement (2A37) [notify]"))
            #expect(lines.contains("│  │  └─ descriptor Client Characteristic Configuration (2902)  = 00 00"))
            #expect(lines.contains("│  ├─ Body Sensor Location (2A38) [read]  = 01"))
            #expect(
                lines.contains(
                    "│  │  └─ descriptor Characteristic User Description (2901)  = 77 68 65 72 65  \"where\""))
            #expect(lines.contains("│  └─ Heart Rate Control Point (2A39) [write]"))
            #expect(lines.contains("└─ Device Information (180A)"))
            #expect(
                lines.contains(
                    "   ├─ Manufacturer Name String (2A29) [read]  = 73 77 69 66 74 2d 62 6c 65  \"swift-ble\""))
            let refused = try #require(lines.first { $0.contains("Serial Number String (2A25)") })
            #expect(refused.contains("! notPermitted"), "a refused read is shown, not fatal: \(refused)")
            #expect(try await !fixture.isConnected(Self.monitor), "explore disconnects")
            #expect(outcome.errors.isEmpty, "no progress indicator in a pipe")
        }
    }

    @Test func exploreNamesWellKnownVendorUUIDs() async throws {
        let uart = VirtualPeripheral(
            address: "D4:00:00:00:00:01", name: "UART",
            services: [
                VirtualService(
                    uuid: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E",
                    characteristics: [
                        VirtualCharacteristic(uuid: "6E400002-B5A3-F393-E0A9-E50E24DCCA9E", flags: ["write"]),
                        VirtualCharacteristic(uuid: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E", flags: ["notify"]),
                    ])
            ])
        try await CLIFixture.run(peripherals: [uart]) { fixture in
            let outcome = try await fixture.ble("explore", "D4:00:00:00:00:01", "--no-values")
            #expect(outcome.status == 0, "\(outcome.errors)")
            #expect(
                outcome.output.contains("Nordic UART Service (6e400001-b5a3-f393-e0a9-e50e24dcca9e)"),
                "\(outcome.output)")
            #expect(outcome.output.contains("Nordic UART RX (6e400002-b5a3-f393-e0a9-e50e24dcca9e) [write]"))
            #expect(outcome.output.contains("Nordic UART TX (6e400003-b5a3-f393-e0a9-e50e24dcca9e) [notify]"))
        }
    }

    @Test func exploreAsJSON() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("explore", Self.monitor, "--json")
            #expect(outcome.status == 0, "\(outcome.errors)")
            #expect(outcome.output.split(separator: "\n").count == 1, "one object")
            let tree = try #require(
                try JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: Any])
            #expect(tree["address"] as? String == Self.monitor)
            #expect(tree["name"] as? String == "Test HRM")
            let services = try #require(tree["services"] as? [[String: Any]])
            let heartRate = try #require(services.first { $0["uuid"] as? String == "180D" })
            #expect(heartRate["name"] as? String == "Heart Rate")
            #expect(heartRate["primary"] as? Bool == true)
            let characteristics = try #require(heartRate["characteristics"] as? [[String: Any]])
            let location = try #require(characteristics.first { $0["uuid"] as? String == "2A38" })
            #expect(location["value"] as? String == "01")
            #expect(location["properties"] as? [String] == ["read"])
            let described = try #require((location["descriptors"] as? [[String: Any]])?.first)
            #expect(described["uuid"] as? String == "2901")
            #expect(described["value"] as? String == "7768657265")
            let information = try #require(services.first { $0["uuid"] as? String == "180A" })
            let serial = try #require(
                (information["characteristics"] as? [[String: Any]])?.first { $0["uuid"] as? String == "2A25" })
            #expect((serial["error"] as? String)?.hasPrefix("notPermitted") == true, "a refusal is shown, not fatal")
            #expect(try await !fixture.isConnected(Self.monitor))
        }
    }

    @Test func progressOnATerminal() async throws {
        try await CLIFixture.run { fixture in
            let process = try ToolProcess(
                ["explore"] + fixture.busArguments + ["test hrm", "--no-values"], environment: ["NO_COLOR": "1"],
                terminal: true)
            let outcome = try await process.finish()
            #expect(outcome.status == 0, "\(outcome.output)")
            for wait in ["connecting to \(Self.monitor) …", "discovering services …"] {
                #expect(outcome.output.contains("\r\u{1B}[K⠋ \(wait)"), "a spinner while \(wait)")
            }
            #expect(outcome.output.contains("\r\u{1B}[KTest HRM  \(Self.monitor)"), "erased before the tree")
        }
    }

    @Test func exploreByNameWithoutValues() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("explore", "test hrm", "--no-values")
            #expect(outcome.status == 0, "\(outcome.errors)")
            #expect(outcome.output.contains("│  ├─ Body Sensor Location (2A38) [read]\n"))
            #expect(!outcome.output.contains("= 01"))
        }
    }

    @Test(arguments: [
        (["2A38"], "01"),
        (["180D/2A38", "--format", "uint8"], "1"),
        (["body-sensor-location", "--format", "base64"], "AQ=="),
        (["2A29", "--format", "utf8"], "swift-ble"),
        (["device-information/manufacturer name string"], "73 77 69 66 74 2d 62 6c 65"),
    ])
    func readInFormats(arguments: [String], expected: String) async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await ToolProcess.run(["read"] + fixture.busArguments + [Self.monitor] + arguments)
            #expect(outcome.status == 0, "\(outcome.errors)")
            #expect(outcome.output == expected + "\n")
        }
    }

    @Test func readIntegersThatDoNotFit() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("read", Self.monitor, "2A29", "--format", "uint32")
            #expect(outcome.status == ExitCode.failure)
            #expect(outcome.errors.contains("is not a whole number of uint32"))
        }
    }

    @Test func writeStoresTheValue() async throws {
        try await CLIFixture.run { fixture in
            let hex = try await fixture.ble("write", Self.monitor, "2A39", "01 02")
            #expect(hex.status == 0, "\(hex.errors)")
            #expect(hex.output == "wrote 01 02 (2 bytes, request) to Heart Rate Control Point (2A39)\n")
            #expect(try fixture.simulator.value(address: Self.monitor, characteristic: "2A39") == Data([1, 2]))

            let number = try await fixture.ble("write", Self.monitor, "180D/2A39", "300", "--format", "uint16")
            #expect(number.status == 0)
            #expect(try fixture.simulator.value(address: Self.monitor, characteristic: "2A39") == Data([0x2C, 0x01]))

            let text = try await fixture.ble(
                "write", Self.monitor, "2A39", "hi", "--format", "utf8", "--type", "request")
            #expect(text.status == 0)
            #expect(try fixture.simulator.value(address: Self.monitor, characteristic: "2A39") == Data("hi".utf8))
            #expect(try await !fixture.isConnected(Self.monitor))
        }
    }

    @Test func notifyStreamsTimestampedValuesUpToACount() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("notify", Self.monitor, "2A37", "--count", "3")
            #expect(outcome.status == 0, "\(outcome.errors)")
            let lines = outcome.output.split(separator: "\n").map(String.init)
            #expect(lines.count == 3)
            for line in lines {
                let parts = line.components(separatedBy: "  ")
                #expect(parts.count == 2, "\(line)")
                #expect(
                    parts[0].count == 12 && parts[0].filter { $0 == ":" }.count == 2, "a time hh:mm:ss.mmm: \(line)")
                #expect(["00 48", "00 4a", "00 4c"].contains(parts[1]), "\(line)")
            }
            #expect(outcome.errors.contains("subscribed to Heart Rate Measurement (2A37)"))
            #expect(outcome.errors.contains("3 values received; unsubscribing and disconnecting"))
        }
    }

    @Test func readAndNotifyAsJSON() async throws {
        try await CLIFixture.run { fixture in
            let read = try await fixture.ble("read", Self.monitor, "2A38", "--json", "--format", "uint8")
            #expect(read.status == 0, "\(read.errors)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(read.output.utf8)) as? [String: Any], "\(read.output)")
            #expect(object["address"] as? String == Self.monitor)
            #expect(object["characteristic"] as? String == "2A38")
            #expect(object["value"] as? String == "01")
            #expect(object["formatted"] as? String == "1")
            #expect((object["time"] as? String)?.hasSuffix("Z") == true)

            let notify = try await fixture.ble("notify", Self.monitor, "2A37", "--count", "2", "--json")
            #expect(notify.status == 0, "\(notify.errors)")
            let lines = notify.output.split(separator: "\n")
            #expect(lines.count == 2)
            for line in lines {
                let value = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                #expect(["0048", "004a", "004c"].contains(value["value"] as? String ?? ""), "\(line)")
                #expect(value["formatted"] == nil, "hex is the value itself")
            }
        }
    }

    @Test func notifyInAnIntegerFormat() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("notify", Self.monitor, "2A37", "--count", "2", "--format", "uint8")
            #expect(outcome.status == 0)
            let values = outcome.output.split(separator: "\n").map { $0.components(separatedBy: "  ").last ?? "" }
            #expect(values.allSatisfy { ["0 72", "0 74", "0 76"].contains($0) }, "\(values)")
        }
    }

    @Test func ctrlCUnsubscribesAndDisconnects() async throws {
        try await CLIFixture.run { fixture in
            let process = try ToolProcess(["notify"] + fixture.busArguments + [Self.monitor, "2A37"])
            try await process.waitUntil("two values") { output, _ in output.split(separator: "\n").count >= 2 }
            #expect(try await fixture.isConnected(Self.monitor))
            process.send(SIGINT)
            let outcome = try await process.finish()
            #expect(outcome.status == 0, "\(outcome.errors)")
            #expect(outcome.errors.contains("values received; unsubscribing and disconnecting"))
            #expect(try await !fixture.isConnected(Self.monitor), "the link is closed before the tool exits")
        }
    }

    @Test func theBusGoingAwayEndsNotifyWithOneLineAndExitThree() async throws {
        try await CLIFixture.run { fixture in
            let process = try ToolProcess(["notify"] + fixture.busArguments + [Self.monitor, "2A37"])
            try await process.waitUntil("a value") { output, _ in !output.isEmpty }
            fixture.bus.stop()
            let outcome = try await process.finish()
            #expect(outcome.status == ExitCode.bluetoothUnavailable, "\(outcome.errors)")
            let errorLines = outcome.errors.split(separator: "\n").filter { $0.contains("error:") }
            #expect(
                errorLines == ["ble notify: error: the system bus went away (bluetoothUnavailable)"],
                "\(outcome.errors)")
        }
    }

    @Test func aDroppedLinkEndsNotifyWithExitSix() async throws {
        try await CLIFixture.run { fixture in
            let process = try ToolProcess(["notify"] + fixture.busArguments + [Self.monitor, "2A37"])
            try await process.waitUntil("a value") { output, _ in !output.isEmpty }
            try fixture.simulator.dropLink(address: Self.monitor)
            let outcome = try await process.finish()
            #expect(outcome.status == ExitCode.connection)
            #expect(outcome.errors.contains("ble notify: error: the link dropped"), "\(outcome.errors)")
        }
    }
}
