import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// The peer's attribute permissions as a client of bluetoothd sees them: bluetoothd sends
/// reads and writes whatever the Flags say and maps the peer's ATT errors (bluez-dbus-api.md
/// §4.4, §4.7), and raises the link's security itself on Insufficient Encryption
/// (`change_security` in `shared/att.c`): the kernel pairs without a `Pair`, so Just Works is
/// put to the default agent (`RequestAuthorization`), as for a peer's Security Request.
@Suite("Fidelity: attribute permissions and security", .timeLimit(.minutes(1)))
struct PermissionFidelityTests {
    private static let characteristic = BlueZInterface.gattCharacteristic1
    private static let noOptions = DBusValue.dictionary(key: .string, value: .variant, [])

    /// A third service at 0x0030: encryption needed to read (0x0031), an authenticated key
    /// needed to read (0x0033), encryption needed to write (0x0035).
    private static let secure = Paths.path(Paths.sensor.rawValue + "/service0030")
    private static let encryptedRead = Paths.path(secure.rawValue + "/char0031")
    private static let authenticatedRead = Paths.path(secure.rawValue + "/char0033")
    private static let encryptedWrite = Paths.path(secure.rawValue + "/char0035")
    private static let encryptedWriteUUID = "12345678-1234-5678-1234-56789abcde03"

    private static func sensor() -> VirtualPeripheral {
        var sensor = Peripherals.sensor()
        sensor.services.append(
            VirtualService(
                uuid: "12345678-1234-5678-1234-56789abcde00",
                characteristics: [
                    VirtualCharacteristic(
                        uuid: "12345678-1234-5678-1234-56789abcde01", flags: ["read", "encrypt-read"], value: [0x11]),
                    VirtualCharacteristic(
                        uuid: "12345678-1234-5678-1234-56789abcde02", flags: ["read", "encrypt-authenticated-read"],
                        value: [0x22]),
                    VirtualCharacteristic(
                        uuid: encryptedWriteUUID, flags: ["write", "write-without-response", "encrypt-write"],
                        value: [0x00]),
                ]))
        return sensor
    }

    @Test(
        "ReadValue of a characteristic without read: NotPermitted \"Read not permitted\"", arguments: Release.allCases)
    func readNotPermitted(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Self.sensor()]) { _, client, _ in
            try await client.connectSensor()
            for path in [Paths.measurement, Paths.controlPoint, Paths.command] {
                let error = await client.error(path, Self.characteristic, "ReadValue", [Self.noOptions])
                expectError(error, BlueZErrorName.notPermitted, BlueZErrorMessage.readNotPermitted)
            }
        }
    }

    @Test("Security flags are the peer's permissions: they never show in Flags", arguments: Release.allCases)
    func securityFlagsHidden(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Self.sensor()]) { _, client, _ in
            try await client.connectSensor()
            #expect(
                try await client.get(Self.encryptedRead, Self.characteristic, "Flags")
                    == .array(.string, [.string("read")]))
            #expect(
                try await client.get(Self.encryptedWrite, Self.characteristic, "Flags")
                    == .array(.string, [.string("write"), .string("write-without-response")]))
        }
    }

    @Test(
        "Encryption needed: bluetoothd pairs, the default agent authorizes Just Works, and the read is retried after Bonded and Paired",
        arguments: Release.allCases)
    func encryptionRaisedByPairing(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Self.sensor()]) { _, client, _ in
            let agent = ScriptedAgent(answer: .accept(passkey: 0))
            try await agent.register(on: client.connection, capability: "NoInputNoOutput")
            try await client.connectSensor()
            let mark = client.transcript.mark
            let body = try await client.call(Self.encryptedRead, Self.characteristic, "ReadValue", [Self.noOptions])
            #expect(body == [.bytes(Data([0x11]))])
            #expect(agent.received == ["RequestAuthorization(\(Paths.sensor.rawValue))"])
            #expect(
                client.transcript.lines(since: mark, kinds: [.signal, .reply]) == [
                    Trace.changed(Paths.sensor, BlueZInterface.device1, "'Bonded': <true>, 'Paired': <true>"),
                    Trace.changed(Self.encryptedRead, Self.characteristic, "'Value': <[byte 0x11]>"),
                    Trace.reply("ReadValue", "([byte 0x11],)"),
                ])
            // Bonded now: the next read needs nothing more, and nobody is asked again.
            let again = client.transcript.mark
            _ = try await client.call(Self.encryptedRead, Self.characteristic, "ReadValue", [Self.noOptions])
            #expect(client.transcript.since(again).allSatisfy { $0.changedProperties["Paired"] == nil })
            #expect(agent.received.count == 1)
        }
    }

    @Test(
        "Encryption needed with no agent, or one refusing: the pairing fails and the read gets \"Not paired\"; the link stays",
        arguments: [false, true])
    func encryptionRefused(agentRefuses: Bool) async throws {
        try await Fidelity.run(.bluez566, peripherals: [Self.sensor()]) { _, client, _ in
            let agent = ScriptedAgent(answer: .refuse(BlueZErrorName.rejected))
            if agentRefuses { try await agent.register(on: client.connection, capability: "NoInputNoOutput") }
            try await client.connectSensor()
            let error = await client.error(Self.encryptedRead, Self.characteristic, "ReadValue", [Self.noOptions])
            expectError(error, BlueZErrorName.notPermitted, BlueZErrorMessage.notPaired)
            #expect(agent.received == (agentRefuses ? ["RequestAuthorization(\(Paths.sensor.rawValue))"] : []))
            #expect(try await client.get(Paths.sensor, BlueZInterface.device1, "Paired") == .boolean(false))
            #expect(try await client.get(Paths.sensor, BlueZInterface.device1, "Connected") == .boolean(true))
        }
    }

    /// The sensor connected, an accepting agent registered, and pairing slow enough (300 ms)
    /// for a request to arrive while it runs.
    private static func withSlowPairing(_ body: (RecordingClient, ScriptedAgent) async throws -> Void) async throws {
        var options = SimulatorOptions()
        options.pairingDelay = .milliseconds(300)
        try await Fidelity.run(.bluez566, options: options, peripherals: [Self.sensor()]) { _, client, _ in
            let agent = ScriptedAgent(answer: .accept(passkey: 0))
            try await agent.register(on: client.connection, capability: "NoInputNoOutput")
            try await client.connectSensor()
            try await body(client, agent)
        }
    }

    @Test("Encryption needed while a Pair runs: the read waits for that pairing (no agent asked) and is then served")
    func readJoinsPairUnderWay() async throws {
        try await Self.withSlowPairing { client, agent in
            async let pairing = client.call(Paths.sensor, BlueZInterface.device1, "Pair")
            try await Task.sleep(for: .milliseconds(50))
            let body = try await client.call(Self.encryptedRead, Self.characteristic, "ReadValue", [Self.noOptions])
            #expect(body == [.bytes(Data([0x11]))])
            _ = try await pairing
            #expect(agent.received.isEmpty)
        }
    }

    @Test("Encryption needed and the link drops while pairing: the held read fails as a lost link does")
    func heldReadLosesLink() async throws {
        try await Self.withSlowPairing { client, _ in
            async let failure = client.error(Self.encryptedRead, Self.characteristic, "ReadValue", [Self.noOptions])
            try await Task.sleep(for: .milliseconds(50))
            try await client.call(Paths.sensor, BlueZInterface.device1, "Disconnect")
            expectError(await failure, BlueZErrorName.failed, BlueZErrorMessage.attError(0x0e))
            #expect(try await client.get(Paths.sensor, BlueZInterface.device1, "Paired") == .boolean(false))
        }
    }

    @Test(
        "An authenticated key needed: Just Works cannot give one, NotPermitted \"Not paired\"; after Pair with an agent confirming, it reads",
        arguments: Release.allCases)
    func authenticationNeeded(release: Release) async throws {
        var sensor = Self.sensor()
        sensor.pairing.ioCapability = .displayYesNo
        try await Fidelity.run(release, peripherals: [sensor]) { _, client, _ in
            let agent = ScriptedAgent(answer: .accept(passkey: 0))
            try await agent.register(on: client.connection, capability: "KeyboardDisplay")
            try await client.connectSensor()
            let error = await client.error(Self.authenticatedRead, Self.characteristic, "ReadValue", [Self.noOptions])
            expectError(error, BlueZErrorName.notPermitted, BlueZErrorMessage.notPaired)
            #expect(try await client.get(Paths.sensor, BlueZInterface.device1, "Paired") == .boolean(false))
            try await client.call(Paths.sensor, BlueZInterface.device1, "Pair")
            #expect(agent.received == ["RequestConfirmation(\(Paths.sensor.rawValue), 123456)"])
            let body = try await client.call(
                Self.authenticatedRead, Self.characteristic, "ReadValue", [Self.noOptions])
            #expect(body == [.bytes(Data([0x22]))])
        }
    }

    @Test(
        "Encryption needed to write: a command on a plain link is dropped, a request pairs (the agent authorizing) and is stored",
        arguments: Release.allCases)
    func encryptedWrites(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Self.sensor()]) { simulator, client, _ in
            let agent = ScriptedAgent(answer: .accept(passkey: 0))
            try await agent.register(on: client.connection, capability: "NoInputNoOutput")
            try await client.connectSensor()
            let command = DBusValue.dictionary(
                key: .string, value: .variant, [DBusDictionaryEntry(.string("type"), .variant(.string("command")))])
            try await client.call(
                Self.encryptedWrite, Self.characteristic, "WriteValue", [.bytes(Data([0x01])), command])
            // The peer drops it silently: no error response, so no pairing either.
            #expect(
                try simulator.value(address: Peripherals.sensorAddress, characteristic: Self.encryptedWriteUUID)
                    == Data([0x00]))
            #expect(try await client.get(Paths.sensor, BlueZInterface.device1, "Paired") == .boolean(false))
            try await client.call(
                Self.encryptedWrite, Self.characteristic, "WriteValue", [.bytes(Data([0x02])), Self.noOptions])
            #expect(
                try simulator.value(address: Peripherals.sensorAddress, characteristic: Self.encryptedWriteUUID)
                    == Data([0x02]))
            #expect(try await client.get(Paths.sensor, BlueZInterface.device1, "Paired") == .boolean(true))
            #expect(agent.received == ["RequestAuthorization(\(Paths.sensor.rawValue))"])
        }
    }
}
