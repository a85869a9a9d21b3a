import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// `StartNotify`/`StopNotify` sessions and notifications as `Value` changes (bluez-dbus-api.md
/// §1.5, §1.6, §4.4, §4.6, §13.3, Q6–Q8).
@Suite("Fidelity: notifications", .timeLimit(.minutes(1)))
struct NotifyFidelityTests {
    private static let characteristic = BlueZInterface.gattCharacteristic1

    private static func notifying(_ on: Bool, _ path: ObjectPath = Paths.measurement) -> String {
        Trace.changed(path, characteristic, "'Notifying': <\(on)>")
    }

    private static func value(_ bytes: String, _ path: ObjectPath = Paths.measurement) -> String {
        Trace.changed(path, characteristic, "'Value': <\(bytes)>")
    }

    @Test(
        "StartNotify: Notifying=true before the reply; each notification one Value change, equal bytes too; StopNotify: Notifying=false before the reply",
        arguments: Release.allCases)
    func notifyTrace(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            let mark = client.transcript.mark
            try await client.call(Paths.measurement, Self.characteristic, "StartNotify")
            for value in [Data([0x00, 0x50]), Data([0x00, 0x50]), Data([0x00, 0x51])] {
                let delivered = try simulator.notify(
                    address: Peripherals.sensorAddress, characteristic: UUIDs.measurement, value: value)
                #expect(delivered == 1)
            }
            try await client.transcript.count(3, "three notifications", since: mark) {
                $0.changedProperties["Value"] != nil
            }
            try await client.call(Paths.measurement, Self.characteristic, "StopNotify")
            #expect(
                client.transcript.lines(since: mark, kinds: [.reply, .signal]) == [
                    Self.notifying(true), Trace.reply("StartNotify"),
                    Self.value("[byte 0x00, 0x50]"), Self.value("[byte 0x00, 0x50]"), Self.value("[byte 0x00, 0x51]"),
                    Self.notifying(false), Trace.reply("StopNotify"),
                ])
            // After the last session ends nothing is delivered.
            #expect(
                try simulator.notify(
                    address: Peripherals.sensorAddress, characteristic: UUIDs.measurement, value: Data([1])) == 0)
        }
    }

    @Test("StartNotify is idempotent per client; StopNotify without a session fails", arguments: Release.allCases)
    func perSenderSessions(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            let noSession = await client.error(Paths.measurement, Self.characteristic, "StopNotify")
            expectError(noSession, BlueZErrorName.failed, BlueZErrorMessage.noNotifySessionStarted)
            let mark = client.transcript.mark
            try await client.call(Paths.measurement, Self.characteristic, "StartNotify")
            try await client.call(Paths.measurement, Self.characteristic, "StartNotify")
            #expect(
                client.transcript.lines(since: mark, kinds: [.reply, .signal]) == [
                    Self.notifying(true), Trace.reply("StartNotify"), Trace.reply("StartNotify"),
                ])
            try await client.call(Paths.measurement, Self.characteristic, "StopNotify")
            let again = await client.error(Paths.measurement, Self.characteristic, "StopNotify")
            expectError(again, BlueZErrorName.failed, BlueZErrorMessage.noNotifySessionStarted)
        }
    }

    @Test(
        "Notifying=false only when the last client's session ends; notifications reach every client",
        arguments: Release.allCases)
    func twoClients(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, bus in
            try await client.connectSensor()
            let other = try await RecordingClient.connect(to: bus)
            defer { other.close() }
            try await client.call(Paths.measurement, Self.characteristic, "StartNotify")
            let mark = client.transcript.mark
            try await other.call(Paths.measurement, Self.characteristic, "StartNotify")
            try await client.call(Paths.measurement, Self.characteristic, "StopNotify")
            // The other session keeps notifications on: no Notifying change.
            #expect(!client.transcript.since(mark).contains { $0.changedProperties["Notifying"] != nil })
            try simulator.notify(
                address: Peripherals.sensorAddress, characteristic: UUIDs.measurement, value: Data([7]))
            try await client.transcript.first("broadcast notification", since: mark) {
                $0.changedProperties["Value"] == .bytes(Data([7]))
            }
            // The other client leaving the bus ends the last session.
            other.close()
            try await client.transcript.first("Notifying=false", since: mark) {
                $0.isPropertiesChanged(Paths.measurement, Self.characteristic)
                    && $0.changedProperties["Notifying"] == .boolean(false)
            }
        }
    }

    @Test(
        "StartNotify without notify/indicate is NotSupported; on an indicate-only characteristic it works",
        arguments: Release.allCases)
    func notifyFlags(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            let error = await client.error(Paths.location, Self.characteristic, "StartNotify")
            expectError(error, BlueZErrorName.notSupported, BlueZErrorMessage.notSupported)
            try await client.call(Paths.indicate, Self.characteristic, "StartNotify")
            let mark = client.transcript.mark
            try simulator.notify(address: Peripherals.sensorAddress, characteristic: UUIDs.indicate, value: Data([9]))
            let change = try await client.transcript.first("indication", since: mark) {
                $0.changedProperties["Value"] != nil
            }
            #expect(change.description == Self.value("[byte 0x09]", Paths.indicate))
        }
    }

    @Test(
        "StartNotify while disconnected succeeds and is applied at the next connection (Q8)",
        arguments: Release.allCases)
    func startNotifyWhileDisconnected(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            let down = client.transcript.mark
            try await client.call(Paths.sensor, BlueZInterface.device1, "Disconnect")
            // 5.66 says Connected=false after the reply: not a change StartNotify announces.
            try await client.waitForDisconnected(since: down)
            let mark = client.transcript.mark
            try await client.call(Paths.measurement, Self.characteristic, "StartNotify")
            // Success at once, nothing announced: the CCC is written at the next connection.
            #expect(client.transcript.lines(since: mark, kinds: [.reply, .signal]) == [Trace.reply("StartNotify")])
            // Asking again before that is InProgress.
            let again = await client.error(Paths.measurement, Self.characteristic, "StartNotify")
            expectError(again, BlueZErrorName.inProgress, BlueZErrorMessage.inProgress)
            let connect = client.transcript.mark
            try await client.connectAndResolve()
            // Notifying turns true once the stored session is registered.
            try await client.transcript.first("Notifying=true", since: connect) {
                $0.isPropertiesChanged(Paths.measurement, Self.characteristic)
                    && $0.changedProperties["Notifying"] == .boolean(true)
            }
            let before = client.transcript.mark
            try simulator.notify(
                address: Peripherals.sensorAddress, characteristic: UUIDs.measurement, value: Data([3]))
            try await client.transcript.first("notification", since: before) {
                $0.changedProperties["Value"] == .bytes(Data([3]))
            }
        }
    }

    @Test(
        "During a Disconnect (the 2 s timer) StartNotify is NotConnected \"Not Connected\"", arguments: Release.allCases
    )
    func startNotifyWhileDisconnecting(release: Release) async throws {
        var options = SimulatorOptions()
        // Long enough that a loaded machine still sends both calls before the link goes (3 s
        // was not, once, in a clean-clone CI run).
        options.disconnectDelay = .seconds(10)
        try await Fidelity.run(release, options: options, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            let disconnect = try await client.startPending(Paths.sensor, BlueZInterface.device1, "Disconnect")
            let error = await client.error(Paths.measurement, Self.characteristic, "StartNotify")
            expectError(error, BlueZErrorName.notConnected, BlueZErrorMessage.notConnectedDefault)
            // Reads still work until the link goes.
            let options = DBusValue.dictionary(key: .string, value: .variant, [])
            #expect(
                try await client.call(Paths.location, Self.characteristic, "ReadValue", [options])
                    == [.bytes(Data([0x01]))])
            #expect(try await disconnect.value.get() == [])
        }
    }

    @Test(
        "Subscriptions survive link loss and re-arm on reconnection; Notifying is not reset (Q7)",
        arguments: Release.allCases)
    func rearmAfterLinkLoss(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            try await client.call(Paths.measurement, Self.characteristic, "StartNotify")
            let mark = client.transcript.mark
            try simulator.dropLink(address: Peripherals.sensorAddress)
            try await client.waitForDisconnected(since: mark)
            #expect(
                client.transcript.lines(since: mark, kinds: [.signal])
                    == ConnectFidelityTests.disconnectTrace(release, reason: .timeout))
            #expect(try await client.get(Paths.measurement, Self.characteristic, "Notifying") == .boolean(true))
            // Nothing reaches a client while the link is down.
            #expect(
                try simulator.notify(
                    address: Peripherals.sensorAddress, characteristic: UUIDs.measurement, value: Data([1])) == 0)
            try await client.connectAndResolve()
            let after = client.transcript.mark
            try simulator.notify(
                address: Peripherals.sensorAddress, characteristic: UUIDs.measurement, value: Data([4]))
            try await client.transcript.first("notification after reconnect", since: after) {
                $0.changedProperties["Value"] == .bytes(Data([4]))
            }
            // Still this client's session: StopNotify succeeds and ends it.
            try await client.call(Paths.measurement, Self.characteristic, "StopNotify")
        }
    }

    @Test("Reading the CCC shows the subscription: 0x0001 for notify, 0x0002 for indicate", arguments: Release.allCases)
    func cccValue(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            let options = DBusValue.dictionary(key: .string, value: .variant, [])
            let off = try await client.call(
                Paths.measurementCCC, BlueZInterface.gattDescriptor1, "ReadValue", [options])
            #expect(off == [.bytes(Data([0x00, 0x00]))])
            try await client.call(Paths.measurement, Self.characteristic, "StartNotify")
            let on = try await client.call(Paths.measurementCCC, BlueZInterface.gattDescriptor1, "ReadValue", [options])
            #expect(on == [.bytes(Data([0x01, 0x00]))])
            // Indications enable bit 1 (0x0002).
            try await client.call(Paths.indicate, Self.characteristic, "StartNotify")
            let indicate = try await client.call(
                Paths.indicateCCC, BlueZInterface.gattDescriptor1, "ReadValue", [options])
            #expect(indicate == [.bytes(Data([0x02, 0x00]))])
        }
    }
}
