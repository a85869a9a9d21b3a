import BLE
import BLESimulator
import DBus
import Foundation
import Testing

/// `BLELogger`: every D-Bus call traceable as `path iface.Member args`, payload bytes only
/// when asked for.
@Suite("Logging", .timeLimit(.minutes(1)))
struct LoggingTests {
    static let hrm = SimulatorFixture.heartRateAddress
    static let device = SimPath.device(hrm)

    static func exercise(_ fixture: SimulatorFixture, _ recorder: LogRecorder) async throws {
        let (central, peripheral) = try await fixture.connected(options: tracing(recorder))
        let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
        _ = try await location.read()
        let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
        try await control.write(Data([0xAB, 0xCD]), type: .withResponse)
        try await peripheral.disconnect()
        await central.close()
    }

    @Test("at trace level each D-Bus call is logged as `path iface.Member args`, then its result")
    func traceCalls() async throws {
        let recorder = LogRecorder(level: .trace)
        try await SimulatorFixture.run { fixture in try await Self.exercise(fixture, recorder) }
        let lines = recorder.lines
        #expect(lines.contains("/org/bluez/hci0 org.bluez.Adapter1.StartDiscovery "))
        #expect(lines.contains("\(Self.device) org.bluez.Device1.Connect "))
        #expect(lines.contains("\(Self.device) Connect -> "))
        #expect(lines.contains("\(Self.device) org.bluez.Device1.Disconnect "))
        let read = try #require(lines.first { $0.contains("org.bluez.GattCharacteristic1.ReadValue") })
        #expect(read.hasPrefix(Self.device + "/service"))
        #expect(read.hasSuffix("org.bluez.GattCharacteristic1.ReadValue a{sv}"))
        #expect(lines.contains { $0.hasPrefix(Self.device + "/service") && $0.hasSuffix("ReadValue -> 1 B") })
        let write = try #require(lines.first { $0.contains("org.bluez.GattCharacteristic1.WriteValue") })
        #expect(write.hasSuffix("WriteValue 2 B, a{sv}"), "sizes, not bytes")
        #expect(!lines.contains { $0.contains("ab cd") })
    }

    @Test("payload bytes only with includesPayloads")
    func payloads() async throws {
        let recorder = LogRecorder(level: .trace, includesPayloads: true)
        try await SimulatorFixture.run { fixture in try await Self.exercise(fixture, recorder) }
        let lines = recorder.lines
        #expect(lines.contains { $0.hasSuffix("ReadValue -> 1") }, "the byte read, in hex")
        let write = try #require(lines.first { $0.contains("org.bluez.GattCharacteristic1.WriteValue") })
        #expect(write.contains("WriteValue ab cd, "))
        #expect(write.contains("request"), "the options too")
    }

    @Test("above trace, calls are not logged; lifecycle events are")
    func levels() async throws {
        let recorder = LogRecorder(level: .info)
        try await SimulatorFixture.run { fixture in
            try await Self.exercise(fixture, recorder)
            // A restart is a lifecycle event worth an info line.
            let central = try await fixture.central(options: tracing(recorder))
            try await fixture.simulator.restartDaemon(downtime: .milliseconds(50))
            try await recorder.waitFor("bluetoothd is on the bus")
            await central.close()
        }
        #expect(!recorder.lines.contains { $0.contains("org.bluez.") && $0.contains("ReadValue") })
        #expect(recorder.lines.contains("bluetoothd left the bus"))
    }

    @Test("a logger gets levels and metadata as given; disabled logs nothing")
    func loggerShape() {
        let seen = PosixMutex<[(BLELogger.Level, String, BLELogger.Metadata)]>([])
        let logger = BLELogger(level: .debug) { level, message, metadata in
            seen.withLock { $0.append((level, message, metadata)) }
        }
        logger.log(.trace, "dropped")
        logger.log(.debug, "kept", metadata: ["path": "/org/bluez/hci0"])
        logger.log(.info, "also kept")
        let entries = seen.withLock { $0 }
        #expect(entries.map(\.1) == ["kept", "also kept"])
        #expect(entries.first?.0 == .debug)
        #expect(entries.first?.2 == ["path": "/org/bluez/hci0"])
        #expect(logger.isEnabled(.debug) && !logger.isEnabled(.trace))
        #expect(!BLELogger.disabled.isEnabled(.info))
        let built = PosixMutex(false)
        BLELogger.disabled.log(
            .info,
            { () -> String in
                built.withLock { $0 = true }
                return "never built"
            }())
        #expect(!built.withLock { $0 }, "messages are built only when enabled")
    }
}
