import BLESimulator
import BlueZ
import DBus
import Testing

/// Discovery sessions: Start/Stop replies and errors, per-sender sessions, clients leaving
/// the bus, power (bluez-dbus-api.md §1.6, §2.1, §2.4, §13.1, Q14, Q17).
@Suite("Fidelity: discovery sessions", .timeLimit(.minutes(1)))
struct DiscoverySessionFidelityTests {
    private static func discovering(_ on: Bool) -> String {
        Trace.changed(Paths.adapter, BlueZInterface.adapter1, "'Discovering': <\(on)>")
    }

    @Test(
        "StartDiscovery replies before Discovering=true; StopDiscovery replies, then Discovering=false",
        arguments: Release.allCases)
    func startStopOrder(release: Release) async throws {
        try await Fidelity.run(release) { _, client, _ in
            try await client.startDiscovery()
            try await client.stopDiscovery()
            #expect(
                client.transcript.lines(kinds: [.reply, .signal]) == [
                    Trace.reply("StartDiscovery"), Self.discovering(true),
                    Trace.reply("StopDiscovery"), Self.discovering(false),
                ])
        }
    }

    @Test(
        "A second StartDiscovery from the same client is InProgress; StopDiscovery without a session fails",
        arguments: Release.allCases)
    func perSenderErrors(release: Release) async throws {
        try await Fidelity.run(release) { _, client, _ in
            let stopFirst = await client.error(Paths.adapter, BlueZInterface.adapter1, "StopDiscovery")
            expectError(stopFirst, BlueZErrorName.failed, BlueZErrorMessage.noDiscoveryStarted)
            try await client.startDiscovery()
            let again = await client.error(Paths.adapter, BlueZInterface.adapter1, "StartDiscovery")
            expectError(again, BlueZErrorName.inProgress, BlueZErrorMessage.operationAlreadyInProgress)
            try await client.stopDiscovery()
            let stopAgain = await client.error(Paths.adapter, BlueZInterface.adapter1, "StopDiscovery")
            expectError(stopAgain, BlueZErrorName.failed, BlueZErrorMessage.noDiscoveryStarted)
        }
    }

    @Test(
        "Two clients share one discovery: Discovering goes false only when the last session ends",
        arguments: Release.allCases)
    func twoClientsShare(release: Release) async throws {
        try await Fidelity.run(release) { _, client, bus in
            let other = try await RecordingClient.connect(to: bus)
            defer { other.close() }
            try await client.startDiscovery()
            // The second session joins the running scan: success, no second Discovering signal.
            try await other.call(Paths.adapter, BlueZInterface.adapter1, "StartDiscovery")
            try await client.call(Paths.adapter, BlueZInterface.adapter1, "StopDiscovery")
            // Only this client's session ended; the other one keeps the scan running.
            #expect(try await client.get(Paths.adapter, BlueZInterface.adapter1, "Discovering") == .boolean(true))
            try await other.call(Paths.adapter, BlueZInterface.adapter1, "StopDiscovery")
            try await client.transcript.first("Discovering=false") {
                $0.isPropertiesChanged(Paths.adapter, BlueZInterface.adapter1)
                    && $0.changedProperties["Discovering"] == .boolean(false)
            }
            #expect(
                client.transcript.lines(kinds: [.signal]) == [Self.discovering(true), Self.discovering(false)])
        }
    }

    @Test(
        "A client leaving the bus loses its session; Discovering=false if it was the only one",
        arguments: Release.allCases)
    func clientLeavingStopsDiscovery(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, bus in
            let scanner = try await RecordingClient.connect(to: bus)
            let mark = client.transcript.mark
            try await scanner.startDiscovery()
            try await client.waitForDevice(Paths.sensor, since: mark)
            scanner.close()
            // The observer sees the session go: RSSI/TxPower invalidated, then Discovering=false.
            try await client.transcript.first("Discovering=false") {
                $0.isPropertiesChanged(Paths.adapter, BlueZInterface.adapter1)
                    && $0.changedProperties["Discovering"] == .boolean(false)
            }
            let tail = client.transcript.lines(since: mark, kinds: [.signal]).suffix(2)
            #expect(
                Array(tail) == [
                    Trace.changed(Paths.sensor, BlueZInterface.device1, invalidated: ["RSSI", "TxPower"]),
                    Self.discovering(false),
                ])
            // The observer never had a session of its own.
            let stop = await client.error(Paths.adapter, BlueZInterface.adapter1, "StopDiscovery")
            expectError(stop, BlueZErrorName.failed, BlueZErrorMessage.noDiscoveryStarted)
        }
    }

    @Test(
        "A client that set a filter leaving while no discovery runs: Discovering=false again (discovery_disconnect)",
        arguments: Release.allCases)
    func filterClientLeavingWhileIdle(release: Release) async throws {
        try await Fidelity.run(release) { _, client, bus in
            let other = try await RecordingClient.connect(to: bus)
            #expect(await other.setDiscoveryFilter(["Transport": .string("le")]) == nil)
            let mark = client.transcript.mark
            other.close()
            try await client.transcript.first("Discovering=false") {
                $0.isPropertiesChanged(Paths.adapter, BlueZInterface.adapter1)
                    && $0.changedProperties["Discovering"] == .boolean(false)
            }
            #expect(client.transcript.lines(since: mark, kinds: [.signal]) == [Self.discovering(false)])
        }
    }

    @Test("A client without a filter or session leaving announces nothing", arguments: Release.allCases)
    func plainClientLeavingIsSilent(release: Release) async throws {
        try await Fidelity.run(release) { _, client, bus in
            let other = try await RecordingClient.connect(to: bus)
            let mark = client.transcript.mark
            other.close()
            // A filter set and dropped by a third client after that is the event to wait for.
            let third = try await RecordingClient.connect(to: bus)
            #expect(await third.setDiscoveryFilter(["Transport": .string("le")]) == nil)
            third.close()
            try await client.transcript.first("Discovering=false") { $0.changedProperties["Discovering"] != nil }
            #expect(client.transcript.lines(since: mark, kinds: [.signal]) == [Self.discovering(false)])
        }
    }

    @Test(
        "A client with only a filter leaving while one other client discovers stops that discovery under it",
        arguments: Release.allCases)
    func filterClientLeavingStopsALoneDiscovery(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, bus in
            try await client.startDiscovery()
            try await client.waitForDevice(Paths.sensor)
            let other = try await RecordingClient.connect(to: bus)
            #expect(await other.setDiscoveryFilter(["Transport": .string("le")]) == nil)
            let mark = client.transcript.mark
            other.close()
            // `discovery_stop` sees fewer than two discovering clients and stops the kernel's
            // discovery (`stop_discovery_complete`); the remaining session stays registered.
            try await client.transcript.first("Discovering=false", since: mark) {
                $0.isPropertiesChanged(Paths.adapter, BlueZInterface.adapter1)
                    && $0.changedProperties["Discovering"] == .boolean(false)
            }
            #expect(try await client.get(Paths.adapter, BlueZInterface.adapter1, "Discovering") == .boolean(false))
            let again = await client.error(Paths.adapter, BlueZInterface.adapter1, "StartDiscovery")
            expectError(again, BlueZErrorName.inProgress, BlueZErrorMessage.operationAlreadyInProgress)
            // Stopping it takes the idle branch: the cleanup and Discovering=false before the reply.
            let stop = client.transcript.mark
            try await client.call(Paths.adapter, BlueZInterface.adapter1, "StopDiscovery")
            let lines = client.transcript.lines(since: stop, kinds: [.reply, .signal])
            let reply = try #require(lines.firstIndex { $0.hasPrefix("← StopDiscovery") }, "\(lines)")
            let stopped = try #require(lines.firstIndex(of: Self.discovering(false)), "\(lines)")
            #expect(stopped < reply, "\(lines)")
            // Starting again runs a new discovery.
            try await client.startDiscovery()
            #expect(try await client.get(Paths.adapter, BlueZInterface.adapter1, "Discovering") == .boolean(true))
        }
    }

    @Test("Another client leaving keeps a running discovery", arguments: Release.allCases)
    func otherClientLeavingKeepsDiscovery(release: Release) async throws {
        try await Fidelity.run(release) { _, client, bus in
            let other = try await RecordingClient.connect(to: bus)
            try await client.startDiscovery()
            try await other.call(Paths.adapter, BlueZInterface.adapter1, "StartDiscovery")
            let mark = client.transcript.mark
            other.close()
            // The bus reports the name gone; a call made after that finds the session still there.
            let again = await client.error(Paths.adapter, BlueZInterface.adapter1, "StartDiscovery")
            expectError(again, BlueZErrorName.inProgress, BlueZErrorMessage.operationAlreadyInProgress)
            #expect(try await client.get(Paths.adapter, BlueZInterface.adapter1, "Discovering") == .boolean(true))
            #expect(!client.transcript.since(mark).contains { $0.changedProperties["Discovering"] != nil })
        }
    }

    @Test("Powered off: StartDiscovery and StopDiscovery are NotReady", arguments: Release.allCases)
    func notReadyWhenOff(release: Release) async throws {
        var options = SimulatorOptions()
        options.poweredOnStart = false
        try await Fidelity.run(release, options: options) { _, client, _ in
            let powered = try await client.get(Paths.adapter, BlueZInterface.adapter1, "Powered")
            #expect(powered == .boolean(false))
            let start = await client.error(Paths.adapter, BlueZInterface.adapter1, "StartDiscovery")
            expectError(start, BlueZErrorName.notReady, BlueZErrorMessage.notReady)
            let stop = await client.error(Paths.adapter, BlueZInterface.adapter1, "StopDiscovery")
            expectError(stop, BlueZErrorName.notReady, BlueZErrorMessage.notReady)
        }
    }
}
