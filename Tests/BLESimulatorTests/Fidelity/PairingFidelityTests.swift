import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// `AgentManager1` and `Device1.Pair` as bluetoothd 5.66 runs them (`src/agent.c`,
/// `pair_device`, `device_bonding_complete`, `new_authentication_return`): the method follows
/// both IO capabilities, the caller's agent is asked, and failures have BlueZ's names.
@Suite("Fidelity: pairing and agents", .timeLimit(.minutes(1)))
struct PairingFidelityTests {
    private static let device1 = BlueZInterface.device1
    private static let agentManager = BlueZInterface.agentManager1

    private static func sensor(_ capability: SimulatedPairing.IOCapability, passkey: UInt32 = 654_321)
        -> VirtualPeripheral
    {
        var sensor = Peripherals.sensor()
        sensor.pairing = SimulatedPairing(ioCapability: capability, passkey: passkey)
        return sensor
    }

    @Test("RegisterAgent: one per client (AlreadyExists), exact capability names; Unregister needs the path")
    func agentManager() async throws {
        try await Fidelity.run(.bluez566) { _, client, _ in
            let agent = ScriptedAgent.path
            let bad = await client.error(
                Paths.manager, Self.agentManager, "RegisterAgent", [.objectPath(agent), .string("Display")])
            expectError(bad, BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidArguments)
            try await client.call(Paths.manager, Self.agentManager, "RegisterAgent", [.objectPath(agent), .string("")])
            let twice = await client.error(
                Paths.manager, Self.agentManager, "RegisterAgent", [.objectPath(agent), .string("DisplayOnly")])
            expectError(twice, BlueZErrorName.alreadyExists, BlueZErrorMessage.alreadyExists)
            let other = Paths.path("/test/other")
            for member in ["RequestDefaultAgent", "UnregisterAgent"] {
                let wrong = await client.error(Paths.manager, Self.agentManager, member, [.objectPath(other)])
                expectError(wrong, BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist)
            }
            try await client.call(Paths.manager, Self.agentManager, "RequestDefaultAgent", [.objectPath(agent)])
            try await client.call(Paths.manager, Self.agentManager, "UnregisterAgent", [.objectPath(agent)])
            let gone = await client.error(Paths.manager, Self.agentManager, "UnregisterAgent", [.objectPath(agent)])
            expectError(gone, BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist)
        }
    }

    @Test("Passkey entry: RequestPasskey(device), then Paired and Bonded, then the reply; again AlreadyExists")
    func passkeyEntry() async throws {
        try await Fidelity.run(.bluez566, peripherals: [Self.sensor(.displayOnly)]) { _, client, _ in
            let agent = ScriptedAgent(answer: .accept(passkey: 654_321))
            try await agent.register(on: client.connection, capability: "KeyboardOnly")
            try await client.connectSensor()
            let mark = client.transcript.mark
            try await client.call(Paths.sensor, Self.device1, "Pair")
            #expect(agent.received == ["RequestPasskey(\(Paths.sensor.rawValue))"])
            #expect(
                client.transcript.lines(since: mark, kinds: [.signal, .reply]) == [
                    Trace.changed(Paths.sensor, Self.device1, "'Paired': <true>, 'Bonded': <true>"),
                    Trace.reply("Pair"),
                ])
            let again = await client.error(Paths.sensor, Self.device1, "Pair")
            expectError(again, BlueZErrorName.alreadyExists, BlueZErrorMessage.alreadyExists)
        }
    }

    @Test("Pair on a disconnected device: the link comes up, bonding, resolution, then the reply")
    func pairConnects() async throws {
        try await Fidelity.run(.bluez566, peripherals: [Self.sensor(.noInputNoOutput)]) { _, client, _ in
            try await client.discoverSensor()
            let mark = client.transcript.mark
            try await client.call(Paths.sensor, Self.device1, "Pair")
            let changes = client.transcript.since(mark).filter { $0.isPropertiesChanged(Paths.sensor, Self.device1) }
            let order = changes.flatMap { $0.changedProperties.keys.sorted() }
            #expect(order.firstIndex(of: "Connected") ?? 99 < order.firstIndex(of: "Paired") ?? -1)
            #expect(order.firstIndex(of: "Paired") ?? 99 < order.firstIndex(of: "ServicesResolved") ?? -1)
            #expect(try await client.get(Paths.sensor, Self.device1, "Connected") == .boolean(true))
        }
    }

    @Test(
        "Agent refusals and silence: Rejected → AuthenticationFailed; no answer → AuthenticationTimeout and Cancel")
    func agentFailures() async throws {
        var options = SimulatorOptions()
        options.pairingTimeout = .milliseconds(300)
        try await Fidelity.run(.bluez566, options: options, peripherals: [Self.sensor(.displayYesNo)]) {
            _, client, bus in
            let refusing = ScriptedAgent(answer: .refuse(BlueZErrorName.rejected))
            try await refusing.register(on: client.connection, capability: "DisplayYesNo")
            try await client.connectSensor()
            let refused = await client.error(Paths.sensor, Self.device1, "Pair")
            expectError(refused, BlueZErrorName.authenticationFailed, BlueZErrorMessage.authenticationFailed)
            #expect(refusing.received == ["RequestConfirmation(\(Paths.sensor.rawValue), 654321)"])

            // Another client's agent that never answers: its Pair times out and the agent is told.
            let silent = ScriptedAgent(answer: .silence)
            let other = try await bus.connect()
            defer { other.close() }
            try await silent.register(on: other, capability: "KeyboardDisplay")
            let error = await #expect(throws: DBusError.self) {
                try await other.call(
                    destination: BlueZService.busName, path: Paths.sensor, interface: Self.device1,
                    member: BlueZMethod.pair, timeout: .seconds(10))
            }
            expectError(error, BlueZErrorName.authenticationTimeout, BlueZErrorMessage.authenticationTimeout)
            try await silent.waitFor("Cancel")
            #expect(silent.received.first == "RequestConfirmation(\(Paths.sensor.rawValue), 654321)")
        }
    }

    @Test("CancelPairing while the agent is asked: Pair fails AuthenticationCanceled, the agent gets Cancel")
    func cancelPairing() async throws {
        try await Fidelity.run(.bluez566, peripherals: [Self.sensor(.displayOnly)]) { _, client, _ in
            let agent = ScriptedAgent(answer: .silence)
            try await agent.register(on: client.connection, capability: "KeyboardOnly")
            try await client.connectSensor()
            let pair = try await client.startPending(Paths.sensor, Self.device1, "Pair")
            try await agent.waitFor("RequestPasskey")
            try await client.call(Paths.sensor, Self.device1, "CancelPairing")
            guard case .failure(let error) = await pair.value else {
                Issue.record("Pair succeeded")
                return
            }
            expectError(error, BlueZErrorName.authenticationCanceled, BlueZErrorMessage.authenticationCanceled)
            try await agent.waitFor("Cancel")
            #expect(try await client.get(Paths.sensor, Self.device1, "Paired") == .boolean(false))
        }
    }

    @Test("A restart releases agents (Release) and keeps bonds")
    func restart() async throws {
        try await Fidelity.run(.bluez566, peripherals: [Self.sensor(.noInputNoOutput)]) { simulator, client, _ in
            let agent = ScriptedAgent(answer: .accept(passkey: 0))
            try await agent.register(on: client.connection, capability: "NoInputNoOutput")
            try await client.connectSensor()
            try await client.call(Paths.sensor, Self.device1, "Pair")
            try await simulator.restartDaemon()
            try await agent.waitFor("Release")
            #expect(try await client.get(Paths.sensor, Self.device1, "Paired") == .boolean(true))
        }
    }
}
