import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// A peripheral's SMP Security Request as Linux and bluetoothd 5.66 handle it: the kernel pairs
/// with no `Pair` call, bluetoothd asks the default agent (`agent_get(NULL)`) with the method
/// both IO capabilities and the MITM wish give (`RequestAuthorization` for Just Works, as
/// `device_confirm_passkey` does with `confirm_hint` and no bonding), announces `Bonded` then
/// `Paired`, and refuses when no agent exists.
@Suite("Fidelity: pairing a peripheral asks for", .timeLimit(.minutes(1)))
struct PeerSecurityFidelityTests {
    private static let device1 = BlueZInterface.device1
    private static let address = Peripherals.sensorAddress

    private static func sensor(
        _ capability: SimulatedPairing.IOCapability = .noInputNoOutput, requests: SimulatedPairing.SecurityLevel? = nil
    ) -> VirtualPeripheral {
        var sensor = Peripherals.sensor()
        sensor.pairing = SimulatedPairing(ioCapability: capability, passkey: 654_321, requestsSecurity: requests)
        return sensor
    }

    /// Calls `Pair` until one bonds by itself: one made while the pairing the peer started
    /// runs ends with it (`AuthenticationFailed` when it fails). A `Pair` that succeeds proves
    /// that pairing ended without a bond (`AlreadyExists` otherwise).
    private static func pairOnceIdle(_ client: RecordingClient) async throws {
        let end = ContinuousClock.now + Fidelity.eventDeadline
        while true {
            let error = await client.error(Paths.sensor, device1, "Pair")
            guard let error else { return }
            guard error.name == BlueZErrorName.authenticationFailed, ContinuousClock.now < end else {
                Issue.record("Pair failed: \(error)")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    private static func waitForPaired(_ client: RecordingClient, since mark: Int) async throws {
        try await client.transcript.first("Paired=true", since: mark) {
            $0.isPropertiesChanged(Paths.sensor, device1) && $0.changedProperties["Paired"] == .boolean(true)
        }
    }

    /// Connects the sensor with a DisplayYesNo agent that accepts, and has it bond at its
    /// request; returns the agent and the transcript mark taken just before the request.
    private static func bondAtPeerRequest(_ simulator: Simulator, _ client: RecordingClient) async throws
        -> (agent: ScriptedAgent, mark: Int)
    {
        let agent = ScriptedAgent(answer: .accept(passkey: 0))
        try await agent.register(on: client.connection, capability: "DisplayYesNo")
        try await client.connectSensor()
        let mark = client.transcript.mark
        #expect(try simulator.requestSecurity(address: address, level: .encrypted) == 1)
        try await waitForPaired(client, since: mark)
        return (agent, mark)
    }

    @Test("Just Works asked for by the peer: RequestAuthorization(device) to the default agent, then Bonded and Paired")
    func justWorksAsksAuthorization() async throws {
        try await Fidelity.run(.bluez566, peripherals: [Self.sensor()]) { simulator, client, _ in
            let (agent, mark) = try await Self.bondAtPeerRequest(simulator, client)
            #expect(agent.received == ["RequestAuthorization(\(Paths.sensor.rawValue))"])
            #expect(
                client.transcript.lines(since: mark, kinds: [.signal]).filter { $0.contains("Paired") } == [
                    Trace.changed(Paths.sensor, Self.device1, "'Bonded': <true>, 'Paired': <true>")
                ])
            // A second request with the key in place only encrypts: nobody is asked.
            #expect(try simulator.requestSecurity(address: Self.address, level: .encrypted) == 0)
            #expect(agent.received.count == 1)
        }
    }

    @Test("requestsSecurity: asked right after connecting; Bonded first, Paired never before ServicesResolved")
    func requestedAtConnection() async throws {
        var options = SimulatorOptions()
        // Resolution well after SMP: `Paired` waits for it (`pending_paired`).
        options.resolveDelay = .milliseconds(500)
        try await Fidelity.run(.bluez566, options: options, peripherals: [Self.sensor(requests: .encrypted)]) {
            _, client, _ in
            let agent = ScriptedAgent(answer: .accept(passkey: 0))
            try await agent.register(on: client.connection, capability: "KeyboardDisplay")
            try await client.discoverSensor()
            let mark = client.transcript.mark
            try await client.call(Paths.sensor, Self.device1, "Connect")
            try await Self.waitForPaired(client, since: mark)
            #expect(agent.received == ["RequestAuthorization(\(Paths.sensor.rawValue))"])
            let changes = client.transcript.since(mark).filter { $0.isPropertiesChanged(Paths.sensor, Self.device1) }
            let bonded = changes.firstIndex { $0.changedProperties["Bonded"] == .boolean(true) }
            let paired = changes.firstIndex { $0.changedProperties["Paired"] == .boolean(true) }
            let resolved = changes.firstIndex { $0.changedProperties["ServicesResolved"] == .boolean(true) }
            #expect(bonded != nil && bonded! <= paired!)
            #expect(resolved != nil && resolved! <= paired!)
        }
    }

    @Test(
        "MITM wanted: passkey entry and numeric comparison ask the default agent; a NoInputNoOutput one fails, unasked",
        arguments: [
            ("KeyboardOnly", SimulatedPairing.IOCapability.displayOnly, "RequestPasskey(%@)" as String?),
            ("DisplayYesNo", .displayYesNo, "RequestConfirmation(%@, 654321)"),
            ("NoInputNoOutput", .displayYesNo, nil),
        ])
    func authenticated(agentCapability: String, peer: SimulatedPairing.IOCapability, question: String?) async throws {
        try await Fidelity.run(.bluez566, peripherals: [Self.sensor(peer)]) { simulator, client, _ in
            let agent = ScriptedAgent(answer: .accept(passkey: 654_321))
            try await agent.register(on: client.connection, capability: agentCapability)
            try await client.connectSensor()
            let mark = client.transcript.mark
            #expect(try simulator.requestSecurity(address: Self.address, level: .authenticated) == 1)
            guard let question else {
                try await Self.pairOnceIdle(client)
                #expect(agent.received.isEmpty)
                return
            }
            try await Self.waitForPaired(client, since: mark)
            #expect(agent.received == [question.replacingOccurrences(of: "%@", with: Paths.sensor.rawValue)])
        }
    }

    @Test("the agent refusing, or no agent at all: no bond, the link stays up, a later Pair still works")
    func refusedOrNoAgent() async throws {
        for refusing in [true, false] {
            try await Fidelity.run(.bluez566, peripherals: [Self.sensor()]) { simulator, client, _ in
                let agent = ScriptedAgent(answer: .refuse(BlueZErrorName.rejected))
                if refusing { try await agent.register(on: client.connection, capability: "DisplayYesNo") }
                try await client.connectSensor()
                let mark = client.transcript.mark
                #expect(try simulator.requestSecurity(address: Self.address, level: .encrypted) == 1)
                if refusing { try await agent.waitFor("RequestAuthorization") }
                // Pair is InProgress until the refused pairing ends, then bonds by itself (its
                // Just Works is auto-accepted): AlreadyExists here would mean the refusal bonded.
                try await Self.pairOnceIdle(client)
                #expect(try await client.get(Paths.sensor, Self.device1, "Connected") == .boolean(true))
                #expect(agent.received == (refusing ? ["RequestAuthorization(\(Paths.sensor.rawValue))"] : []))
                let pairedChanges = client.transcript.since(mark).filter {
                    $0.isPropertiesChanged(Paths.sensor, Self.device1) && $0.changedProperties["Paired"] != nil
                }
                #expect(pairedChanges.count == 1, "only the Pair bonded")
            }
        }
    }

    @Test("a bond made at the peer's request survives a restart; reconnected, the request only encrypts")
    func bondSurvivesRestart() async throws {
        try await Fidelity.run(.bluez566, peripherals: [Self.sensor()]) { simulator, client, _ in
            _ = try await Self.bondAtPeerRequest(simulator, client)
            try await simulator.restartDaemon()
            let tree = try await client.managedObjects()
            let device = try #require(tree.properties(Paths.sensor, Self.device1))
            #expect(device["Paired"] == .boolean(true))
            #expect(device["Bonded"] == .boolean(true))
            try await client.connectAndResolve()
            #expect(try simulator.requestSecurity(address: Self.address, level: .encrypted) == 0)
            // An authenticated key is more than the Just Works bond holds: pairing starts again.
            #expect(try simulator.requestSecurity(address: Self.address, level: .authenticated) == 1)
        }
    }

    /// The peer's pairing ends when the agent answers, not when a timer runs out: a pairing
    /// timeout the calls had to beat failed this test on a loaded machine (the Pair came after
    /// the pairing had timed out, and paired anew).
    @Test("while the peer's pairing runs: CancelPairing has no bonding to cancel; Pair ends with that pairing")
    func pairJoinsThePeersPairing() async throws {
        try await Fidelity.run(.bluez566, peripherals: [Self.sensor()]) { simulator, client, _ in
            let agent = ScriptedAgent(answer: .silence)
            try await agent.register(on: client.connection, capability: "DisplayYesNo")
            try await client.connectSensor()
            #expect(try simulator.requestSecurity(address: Self.address, level: .encrypted) == 1)
            try await agent.waitFor("RequestAuthorization")
            let cancel = await client.error(Paths.sensor, Self.device1, "CancelPairing")
            expectError(cancel, BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist)
            // Returns once bluetoothd has the Pair (round trips behind it): then the agent
            // refuses the peer's pairing, which the Pair joined instead of starting its own.
            let pair = try await client.startPending(Paths.sensor, Self.device1, "Pair")
            agent.answerHeld(refusing: BlueZErrorName.rejected)
            guard case .failure(let error) = await pair.value else {
                Issue.record("Pair succeeded")
                return
            }
            expectError(error, BlueZErrorName.authenticationFailed, BlueZErrorMessage.authenticationFailed)
            let questions = agent.received.filter { $0.hasPrefix("Request") }
            #expect(
                questions == ["RequestAuthorization(\(Paths.sensor.rawValue))"], "asked once: no pairing of its own")
        }
    }
}
