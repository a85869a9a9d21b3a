import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// Injected faults and how bluetoothd reports them (bluez-dbus-api.md §4.7, §8.1, §10.13, Q4,
/// Q25).
@Suite("Fidelity: faults", .timeLimit(.minutes(1)))
struct FaultFidelityTests {
    private static let characteristic = BlueZInterface.gattCharacteristic1
    private static let noOptions = DBusValue.dictionary(key: .string, value: .variant, [])

    @Test("A connect fault fails Connect with the given error, once", arguments: Release.allCases)
    func connectFails(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.discoverSensor()
            simulator.inject(
                SimulatedFault(
                    .connect, address: Peripherals.sensorAddress,
                    action: .fail(name: BlueZErrorName.failed, message: "le-connection-abort-by-local")))
            let error = await client.error(Paths.sensor, BlueZInterface.device1, "Connect")
            expectError(error, BlueZErrorName.failed, "le-connection-abort-by-local")
            #expect(!client.transcript.entries.contains { $0.changedProperties["Connected"] != nil })
            // The fault was used up: the next attempt connects.
            try await client.connectAndResolve()
        }
    }

    @Test(
        "Connect faults: a delay postpones the link, noReply leaves the call to the client's timeout",
        arguments: Release.allCases)
    func connectDelayAndNoReply(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.discoverSensor()
            simulator.inject(SimulatedFault(.connect, action: .noReply))
            let timedOut = await client.error(
                Paths.sensor, BlueZInterface.device1, "Connect", timeout: .milliseconds(300))
            #expect(timedOut?.code == .timeout)
            // The attempt is still pending in bluetoothd; Disconnect cancels it.
            try await client.call(Paths.sensor, BlueZInterface.device1, "Disconnect")
            simulator.inject(SimulatedFault(.connect, action: .delay(.milliseconds(300))))
            let mark = client.transcript.mark
            let started = ContinuousClock.now
            try await client.connectAndResolve()
            // A lower bound only: a delayed answer never comes early, and load only delays it.
            #expect(ContinuousClock.now - started >= .milliseconds(300))
            #expect(
                Array(client.transcript.lines(since: mark, kinds: [.reply, .signal]).prefix(2)) == [
                    Trace.changed(Paths.sensor, BlueZInterface.device1, "'Connected': <true>"), Trace.reply("Connect"),
                ])
        }
    }

    @Test("A delay fault postpones the answer; the trace is unchanged", arguments: Release.allCases)
    func delayedRead(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            simulator.inject(SimulatedFault(.read, characteristic: UUIDs.location, action: .delay(.milliseconds(300))))
            let mark = client.transcript.mark
            let started = ContinuousClock.now
            let body = try await client.call(Paths.location, Self.characteristic, "ReadValue", [Self.noOptions])
            // A lower bound only: a delayed answer never comes early, and load only delays it.
            #expect(ContinuousClock.now - started >= .milliseconds(300))
            #expect(body == [.bytes(Data([0x01]))])
            #expect(
                client.transcript.lines(since: mark, kinds: [.reply, .signal]) == [
                    Trace.changed(Paths.location, Self.characteristic, "'Value': <[byte 0x01]>"),
                    Trace.reply("ReadValue", "([byte 0x01],)"),
                ])
        }
    }

    @Test("A noReply fault leaves the call unanswered: the client's own timeout fires", arguments: Release.allCases)
    func noReply(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            simulator.inject(SimulatedFault(.read, characteristic: UUIDs.location, action: .noReply))
            let error = await client.error(
                Paths.location, Self.characteristic, "ReadValue", [Self.noOptions], timeout: .milliseconds(300))
            #expect(error?.code == .timeout)
            #expect(error?.name == DBusError.StandardName.noReply)
            // The daemon still answers other calls.
            #expect(
                try await client.call(Paths.readOnly, Self.characteristic, "ReadValue", [Self.noOptions])
                    == [.bytes(Data([0x2a]))])
        }
    }

    @Test(
        "The link dropping during a read: Failed ATT error 0x0e and the disconnect trace", arguments: Release.allCases)
    func dropLinkMidRead(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            simulator.inject(SimulatedFault(.read, characteristic: UUIDs.location, action: .dropLink))
            let mark = client.transcript.mark
            let error = await client.error(Paths.location, Self.characteristic, "ReadValue", [Self.noOptions])
            expectError(error, BlueZErrorName.failed, "Operation failed with ATT error: 0x0e")
            try await client.waitForDisconnected(since: mark)
            #expect(
                client.transcript.lines(since: mark, kinds: [.signal])
                    == ConnectFidelityTests.disconnectTrace(release, reason: .timeout))
            // Objects stay; calls now fail "Not connected".
            expectError(
                await client.error(Paths.location, Self.characteristic, "ReadValue", [Self.noOptions]),
                BlueZErrorName.failed, BlueZErrorMessage.notConnected)
        }
    }

    @Test("The link dropping during a pending write: it fails ATT 0x0e at once", arguments: Release.allCases)
    func dropLinkMidWrite(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            // Far longer than the call timeout: the failure must come from the link loss.
            simulator.inject(SimulatedFault(.write, characteristic: UUIDs.data, action: .delay(.seconds(60))))
            let pending = try await client.startPending(
                Paths.data, Self.characteristic, "WriteValue", [.bytes(Data([1])), Self.noOptions])
            try simulator.dropLink(address: Peripherals.sensorAddress)
            guard case .failure(let error) = await pending.value else {
                Issue.record("the write succeeded")
                return
            }
            expectError(error, BlueZErrorName.failed, "Operation failed with ATT error: 0x0e")
        }
    }

    @Test("ATT errors map to D-Bus errors as create_gatt_dbus_error does", arguments: Release.allCases)
    func attErrorMapping(release: Release) async throws {
        let reads: [(UInt8, String, String)] = [
            (0x02, BlueZErrorName.notPermitted, "Read not permitted"),
            (0x05, BlueZErrorName.notPermitted, "Not paired"),
            (0x0c, BlueZErrorName.notPermitted, "Not paired"),
            (0x0f, BlueZErrorName.notPermitted, "Not paired"),
            (0x07, BlueZErrorName.invalidArguments, "Invalid offset"),
            (0x0d, BlueZErrorName.invalidArguments, "Invalid Length"),
            (0x08, BlueZErrorName.notAuthorized, "Operation Not Authorized"),
            (0x06, BlueZErrorName.notSupported, "Operation is not supported"),
            (0x0e, BlueZErrorName.failed, "Operation failed with ATT error: 0x0e"),
            (0x80, BlueZErrorName.failed, "Operation failed with ATT error: 0x80"),
            (0xfd, BlueZErrorName.failed, "Operation failed with ATT error: 0xfd"),
        ]
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            for (code, name, message) in reads {
                simulator.inject(SimulatedFault(.read, characteristic: UUIDs.location, action: .attError(code)))
                let error = await client.error(Paths.location, Self.characteristic, "ReadValue", [Self.noOptions])
                #expect(error?.name == name, "read 0x\(String(code, radix: 16))")
                #expect(error?.message == message, "read 0x\(String(code, radix: 16))")
            }
            simulator.inject(SimulatedFault(.write, characteristic: UUIDs.data, action: .attError(0x03)))
            expectError(
                await client.error(Paths.data, Self.characteristic, "WriteValue", [.bytes(Data([1])), Self.noOptions]),
                BlueZErrorName.notPermitted, "Write not permitted")
            // A failed read announces nothing.
            let mark = client.transcript.mark
            simulator.inject(SimulatedFault(.read, characteristic: UUIDs.location, action: .attError(0x02)))
            _ = await client.error(Paths.location, Self.characteristic, "ReadValue", [Self.noOptions])
            #expect(!client.transcript.since(mark).contains { $0.kind == .signal })
        }
    }

    @Test("Peripheral-defined readError/writeError answer every read or write", arguments: Release.allCases)
    func definedErrors(release: Release) async throws {
        var sensor = Peripherals.sensor()
        sensor.services[0].characteristics[1].readError = 0x02
        sensor.services[0].characteristics[2].writeError = 0x80
        try await Fidelity.run(release, peripherals: [sensor]) { _, client, _ in
            try await client.connectSensor()
            expectError(
                await client.error(Paths.location, Self.characteristic, "ReadValue", [Self.noOptions]),
                BlueZErrorName.notPermitted, "Read not permitted")
            expectError(
                await client.error(
                    Paths.controlPoint, Self.characteristic, "WriteValue", [.bytes(Data([1])), Self.noOptions]),
                BlueZErrorName.failed, "Operation failed with ATT error: 0x80")
        }
    }
}
