import BLESimulator
import DBusTestSupport
import Foundation
import Testing

@testable import BLECommandLine

/// Each kind of failure: its one line on standard error and its exit status.
@Suite(.serialized) struct ErrorPathTests {
    static let monitor = CLIFixture.monitor

    @Test func noBluetoothdOnTheBus() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let outcome = try await ToolProcess.run(["scan", "--bus", bus.address, "--duration", "3"])
        #expect(outcome.status == ExitCode.bluetoothUnavailable)
        #expect(
            outcome.errors
                == "ble scan: error: bluetoothd is not running on bus \(bus.address) (bluetoothUnavailable)\n")
    }

    @Test func unreachableBus() async throws {
        let outcome = try await ToolProcess.run([
            "read", "--bus", "unix:path=/nonexistent/socket", Self.monitor, "2A38",
        ])
        #expect(outcome.status == ExitCode.bluetoothUnavailable)
        #expect(outcome.errors.hasPrefix("ble read: error: cannot reach the bus"), "\(outcome.errors)")
        #expect(outcome.errors.split(separator: "\n").count == 1)
    }

    @Test func theSystemBusIsTheDefault() async throws {
        // The tests point DBUS_SYSTEM_BUS_ADDRESS at nothing, so the default bus is unreachable.
        let outcome = try await ToolProcess.run(["scan", "--duration", "3"])
        #expect(outcome.status == ExitCode.bluetoothUnavailable)
        #expect(outcome.errors.contains("/nonexistent/swift-ble-test-guard"), "\(outcome.errors)")
    }

    @Test func noSuchAdapter() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("scan", "--adapter", "hci7", "--duration", "3")
            #expect(outcome.status == ExitCode.bluetoothUnavailable)
            #expect(outcome.errors == "ble scan: error: no adapter hci7 (adapters: hci0) (unsupported)\n")
        }
    }

    @Test func passiveScanWithoutExperimentalDaemon() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("scan", "--passive", "--service", "180D", "--duration", "3")
            #expect(outcome.status == ExitCode.unsupported)
            #expect(outcome.errors.contains("--experimental"), "\(outcome.errors)")
        }
    }

    @Test func adapterPoweredOff() async throws {
        try await CLIFixture.run { fixture in
            fixture.simulator.setPowered(false)
            let outcome = try await fixture.ble("explore", Self.monitor)
            #expect(outcome.status == ExitCode.bluetoothUnavailable)
            #expect(outcome.errors.hasPrefix("ble explore: error: adapter hci0 is off"), "\(outcome.errors)")
        }
    }

    @Test func unknownAddress() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("read", "AA:BB:CC:DD:EE:FF", "2A38", "--timeout", "1")
            #expect(outcome.status == ExitCode.notFound)
            #expect(outcome.errors == "ble read: error: no device AA:BB:CC:DD:EE:FF seen within 1.0 s (notFound)\n")
        }
    }

    @Test func unknownName() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("explore", "Nobody", "--timeout", "1")
            #expect(outcome.status == ExitCode.notFound)
            #expect(outcome.errors == "ble explore: error: no device named \"Nobody\" seen within 1.0 s (notFound)\n")
        }
    }

    @Test func unknownCharacteristic() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("read", Self.monitor, "2A99")
            #expect(outcome.status == ExitCode.notFound)
            #expect(outcome.errors.hasPrefix("ble read: error: the device has no characteristic 2A99"))
            #expect(try await !fixture.isConnected(Self.monitor), "disconnected after a failure too")
        }
    }

    @Test func refusedRead() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("read", Self.monitor, "2A25")
            #expect(outcome.status == ExitCode.refused)
            #expect(outcome.errors.hasPrefix("ble read: error: "))
            #expect(outcome.errors.hasSuffix("(notPermitted)\n"), "\(outcome.errors)")
        }
    }

    @Test func refusedWrite() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("write", Self.monitor, "2A38", "02")
            #expect(outcome.status == ExitCode.refused, "\(outcome.errors)")
            #expect(outcome.errors.hasPrefix("ble write: error: "))
            #expect(try fixture.simulator.value(address: Self.monitor, characteristic: "2A38") == Data([0x01]))
        }
    }

    @Test func commandTooLongForOnePacket() async throws {
        try await CLIFixture.run { fixture in
            let value = String(repeating: "ab", count: 300)
            let outcome = try await fixture.ble("write", Self.monitor, "2A39", value, "--type", "command")
            #expect(outcome.status == ExitCode.usage)
            #expect(outcome.errors.contains("300 bytes exceed the"), "\(outcome.errors)")
        }
    }

    @Test func connectNeverAnswered() async throws {
        try await CLIFixture.run { fixture in
            fixture.simulator.inject(SimulatedFault(.connect, action: .noReply, count: nil))
            let outcome = try await fixture.ble("read", Self.monitor, "2A38", "--timeout", "1")
            #expect(outcome.status == ExitCode.timeout)
            #expect(outcome.errors.hasSuffix("(timeout)\n"), "\(outcome.errors)")
        }
    }

    @Test func connectFailed() async throws {
        try await CLIFixture.run { fixture in
            fixture.simulator.inject(
                SimulatedFault(
                    .connect, action: .fail(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"),
                    count: nil))
            let outcome = try await fixture.ble("read", Self.monitor, "2A38", "--timeout", "2")
            #expect(outcome.status == ExitCode.connection, "\(outcome.errors)")
            #expect(outcome.errors.hasPrefix("ble read: error: "))
        }
    }

    @Test func notifyOnACharacteristicThatCannot() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("notify", Self.monitor, "2A38")
            #expect(outcome.status == ExitCode.unsupported)
            #expect(
                outcome.errors
                    == "ble notify: error: Body Sensor Location (2A38) neither notifies nor indicates [read] (notSupported)\n"
            )
        }
    }

    @Test func ambiguousCharacteristic() async throws {
        var peripherals = CLIFixture.peripherals()
        peripherals[0].services.append(
            VirtualService(
                uuid: "180F", characteristics: [VirtualCharacteristic(uuid: "2A38", flags: ["read"], value: [7])]))
        try await CLIFixture.run(peripherals: peripherals) { fixture in
            let outcome = try await fixture.ble("read", Self.monitor, "2A38")
            #expect(outcome.status == ExitCode.usage)
            #expect(outcome.errors.contains("2A38 is in several services; name one: 180D/2A38, 180F/2A38"))
            let named = try await fixture.ble("read", Self.monitor, "battery/2A38")
            #expect(named.output == "07\n")
        }
    }

    @Test func ctrlCWhileConnectingExits130() async throws {
        try await CLIFixture.run { fixture in
            fixture.simulator.inject(SimulatedFault(.connect, action: .noReply, count: nil))
            let process = try ToolProcess(
                ["read"] + fixture.busArguments + [Self.monitor, "2A38", "--timeout", "30"], terminal: true)
            try await process.waitUntil("the connecting spinner") { output, _ in output.contains("connecting to") }
            process.send(SIGINT)
            let outcome = try await process.finish()
            #expect(outcome.status == ExitCode.interrupted)
            #expect(outcome.output.contains("ble read: \u{1B}[31merror:\u{1B}[0m interrupted"), "\(outcome.output)")
        }
    }
}
