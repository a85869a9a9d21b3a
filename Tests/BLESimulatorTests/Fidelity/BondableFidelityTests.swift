import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// `Adapter1.Pairable` as bluetoothd 5.66 keeps it with its default configuration
/// (`AlwaysPairable` off): the adapter is bondable only while a default agent is registered
/// (`set_io_cap` in `src/agent.c`, `adapter_set_io_capability`), as the real trace shows when
/// the SDK registers its agent.
@Suite("Fidelity: Pairable follows the default agent", .timeLimit(.minutes(1)))
struct BondableFidelityTests {
    private static let adapter1 = BlueZInterface.adapter1
    private static let agentManager = BlueZInterface.agentManager1

    private static func pairable(_ client: RecordingClient) async throws -> DBusValue? {
        let body = try await client.call(
            Paths.adapter, InterfaceName.properties, "Get", [.string(adapter1.rawValue), .string("Pairable")])
        guard case .variant(let value)? = body.first else { return nil }
        return value
    }

    private static func waitForPairable(_ client: RecordingClient, _ value: Bool, since mark: Int) async throws {
        _ = try await client.transcript.first("Pairable=\(value)", since: mark) {
            $0.isPropertiesChanged(Paths.adapter, adapter1) && $0.changedProperties["Pairable"] == .boolean(value)
        }
    }

    private static func agentCall(_ client: RecordingClient, _ member: String, _ path: ObjectPath) async throws {
        let arguments: [DBusValue] =
            member == "RegisterAgent" ? [.objectPath(path), .string("NoInputNoOutput")] : [.objectPath(path)]
        try await client.call(Paths.manager, agentManager, member, arguments)
    }

    @Test(
        "the first agent makes the adapter pairable after its reply; the last one going ends it",
        arguments: Release.allCases)
    func firstAndLastAgent(release: Release) async throws {
        try await Fidelity.run(release) { _, client, bus in
            #expect(try await Self.pairable(client) == .boolean(false))
            let agent = Paths.path("/test/agent")
            var mark = client.transcript.mark
            try await Self.agentCall(client, "RegisterAgent", agent)
            try await Self.waitForPairable(client, true, since: mark)
            #expect(
                client.transcript.lines(since: mark, kinds: [.signal, .reply]) == [
                    Trace.reply("RegisterAgent"),
                    Trace.changed(Paths.adapter, Self.adapter1, "'Pairable': <true>"),
                ])
            // A second client's agent queues behind the default one: nothing to announce.
            let other = try await RecordingClient.connect(to: bus)
            defer { other.close() }
            mark = client.transcript.mark
            try await Self.agentCall(other, "RegisterAgent", agent)
            try await Self.agentCall(client, "UnregisterAgent", agent)
            #expect(try await Self.pairable(client) == .boolean(true))
            #expect(client.transcript.since(mark).filter { $0.changedProperties["Pairable"] != nil }.isEmpty)
            // The last agent's owner leaves the bus (`agent_disconnect`).
            mark = client.transcript.mark
            other.close()
            try await Self.waitForPairable(client, false, since: mark)
            #expect(try await Self.pairable(client) == .boolean(false))
        }
    }

    @Test("a client's own Set(Pairable) stands until the default agent changes")
    func explicitSet() async throws {
        try await Fidelity.run(.bluez566) { _, client, _ in
            let agent = Paths.path("/test/agent")
            let mark = client.transcript.mark
            try await Self.agentCall(client, "RegisterAgent", agent)
            try await Self.waitForPairable(client, true, since: mark)
            try await client.call(
                Paths.adapter, InterfaceName.properties, "Set",
                [.string(Self.adapter1.rawValue), .string("Pairable"), .variant(.boolean(false))])
            #expect(try await Self.pairable(client) == .boolean(false))
            // RequestDefaultAgent sets the IO capability again, which makes it bondable.
            try await client.call(Paths.manager, Self.agentManager, "RequestDefaultAgent", [.objectPath(agent)])
            #expect(try await Self.pairable(client) == .boolean(true))
        }
    }
}
