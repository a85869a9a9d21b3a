import BLE
import BLESimulator
import DBus
import Foundation
import Testing

/// Calls into the central's pairing agent are accepted from bluetoothd only: a rogue client on
/// the bus that asks for a passkey, a confirmation or an authorization, or cancels, gets
/// AccessDenied, and the app's handler never sees it.
@Suite("Pairing agent: calls from other clients", .timeLimit(.minutes(1)))
struct PairingAgentSenderTests {
    static let agentPath = "/org/swift_ble/agent"

    @Test("rogue Agent1 calls get AccessDenied and never reach the handler; bluetoothd's still do")
    func rogueCallsAreRefused() async throws {
        try await SimulatorFixture.run(peripherals: [SimulatorFixture.pairingMonitor(.displayOnly)]) { fixture in
            let handler = ScriptedPairing(.keyboardOnly, .answer(passkey: 654_321))
            let (central, peripheral) = try await fixture.connected(
                options: SimulatorFixture.pairingOptions(handler))
            // A first pairing registers the agent; forgetting the bond lets the test pair again.
            try await peripheral.pair(timeout: .seconds(10))
            #expect(handler.questions.count == 1)
            try await central.forget(peripheral.id)

            let rogue = try await BusProbe.open(fixture)
            defer { rogue.close() }
            let owner = try BusName(try #require(central.diagnostics.connectionName))
            let device = try ObjectPath(SimPath.device(SimulatorFixture.heartRateAddress))
            let calls: [(String, [DBusValue])] = [
                ("RequestPasskey", [.objectPath(device)]),
                ("RequestConfirmation", [.objectPath(device), .uint32(123_456)]),
                ("RequestAuthorization", [.objectPath(device)]),
                ("DisplayPasskey", [.objectPath(device), .uint32(1), .uint16(0)]),
                ("AuthorizeService", [.objectPath(device), .string("0000180d-0000-1000-8000-00805f9b34fb")]),
                ("RequestPinCode", [.objectPath(device)]),
                ("Cancel", []),
                ("Release", []),
            ]
            for (member, arguments) in calls {
                let error = await #expect(throws: DBusError.self, "\(member)") {
                    try await rogue.connection.call(
                        destination: owner, path: try ObjectPath(Self.agentPath),
                        interface: try InterfaceName("org.bluez.Agent1"), member: try MemberName(member),
                        arguments: arguments, timeout: .seconds(5))
                }
                #expect(error?.name == DBusError.StandardName.accessDenied, "\(member)")
            }
            #expect(handler.questions.count == 1, "the handler saw none of the rogue calls")

            // The agent is still registered and still answers bluetoothd.
            _ = try #require(try await first(central.scan()) { $0.id == peripheral.id })
            let again = try await central.connect(peripheral.id, timeout: .seconds(10))
            try await again.pair(timeout: .seconds(10))
            #expect(handler.questions.count == 2)
            #expect(await again.isPaired)
            await central.close()
        }
    }
}
