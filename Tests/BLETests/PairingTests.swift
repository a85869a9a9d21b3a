import BLE
import BLESimulator
import BlueZ
import Foundation
import Testing

/// `Peripheral.pair(timeout:)` with the central's pairing agent, against the simulator's
/// bluetoothd, which asks the agent what the method (from both IO capabilities) needs.
@Suite("Pairing", .timeLimit(.minutes(1)))
struct PairingTests {
    static let monitor = SimulatorFixture.heartRateAddress

    @Test("Just Works: no question asked; Paired and known as paired; a second pair() succeeds at once")
    func justWorks() async throws {
        let handler = ScriptedPairing(.noInputNoOutput, .refuse)
        try await SimulatorFixture.withPairing(handler: handler) { central, peripheral in
            #expect(await !peripheral.isPaired)
            try await peripheral.pair(timeout: .seconds(10))
            #expect(await peripheral.isPaired)
            #expect(await central.knownPeripherals().first?.isPaired == true)
            #expect(handler.questions.isEmpty)
            try await peripheral.pair(timeout: .seconds(10))
        }
    }

    @Test("the default handler pairs Just Works, connecting first when the link is down")
    func defaultHandlerConnectsFirst() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected()
            try await peripheral.disconnect()
            try await peripheral.pair(timeout: .seconds(10))
            #expect(await peripheral.isPaired)
            #expect(await peripheral.isConnected)
            await central.close()
        }
    }

    @Test("passkey entry: the handler is asked for the passkey the peripheral shows")
    func passkeyEntry() async throws {
        let handler = ScriptedPairing(.keyboardOnly, .answer(passkey: 654_321))
        try await SimulatorFixture.withPairing(handler: handler) { _, peripheral in
            try await peripheral.pair(timeout: .seconds(10))
            #expect(await peripheral.isPaired)
            #expect(handler.questions == ["passkey hci0/\(Self.monitor)"])
        }
    }

    @Test("concurrent pair() calls share one pairing: one question, no InProgress")
    func concurrentCallsShare() async throws {
        let handler = ScriptedPairing(.keyboardOnly, .answer(passkey: 654_321))
        try await SimulatorFixture.withPairing(handler: handler) { _, peripheral in
            async let first: Void = peripheral.pair(timeout: .seconds(10))
            async let second: Void = peripheral.pair(timeout: .seconds(10))
            _ = try await (first, second)
            #expect(await peripheral.isPaired)
            #expect(handler.questions.count == 1)
        }
    }

    @Test("a wrong passkey fails with authenticationFailed, BlueZ's name kept; not paired")
    func wrongPasskey() async throws {
        let handler = ScriptedPairing(.keyboardOnly, .answer(passkey: 111_111))
        try await SimulatorFixture.withPairing(handler: handler) { _, peripheral in
            let error = await bleError { try await peripheral.pair(timeout: .seconds(10)) }
            #expect(error?.code == .authenticationFailed)
            #expect(error?.dbusErrorName == BlueZErrorName.authenticationFailed)
            #expect(await !peripheral.isPaired)
        }
    }

    @Test("numeric comparison: rejected fails with authenticationFailed; confirmed pairs", arguments: [false, true])
    func numericComparison(accept: Bool) async throws {
        let handler = ScriptedPairing(.displayYesNo, accept ? .answer(passkey: 0) : .refuse)
        let peer = SimulatorFixture.pairingMonitor(.displayYesNo, passkey: 42)
        try await SimulatorFixture.withPairing(peer, handler: handler) { _, peripheral in
            let error = await bleError(ifNot: accept) { try await peripheral.pair(timeout: .seconds(10)) }
            #expect(error?.code == (accept ? nil : .authenticationFailed))
            #expect(handler.questions == ["confirm 42 hci0/\(Self.monitor)"])
            #expect(await peripheral.isPaired == accept)
        }
    }

    @Test("passkey display: the handler shows the passkey the peripheral's user types")
    func passkeyDisplay() async throws {
        let handler = ScriptedPairing(.displayYesNo, .refuse)
        let peer = SimulatorFixture.pairingMonitor(.keyboardOnly, passkey: 7)
        try await SimulatorFixture.withPairing(peer, handler: handler) { _, peripheral in
            try await peripheral.pair(timeout: .seconds(10))
            #expect(await peripheral.isPaired)
            try await eventually("the passkey shown") { handler.questions == ["display 7 hci0/\(Self.monitor)"] }
        }
    }

    @Test("a peripheral demanding an authenticated key refuses Just Works; one refusing to pair is rejected")
    func peripheralDemands() async throws {
        var demanding = SimulatorFixture.pairingMonitor(.displayOnly)
        demanding.pairing.requiresAuthentication = true
        var refusing = SimulatorFixture.heartRateMonitor(address: "C4:7C:8D:6A:11:33", name: "Refuser")
        refusing.pairing.rejects = true
        try await SimulatorFixture.run(peripherals: [demanding, refusing]) { fixture in
            let (central, peripheral) = try await fixture.connected()
            let error = await bleError { try await peripheral.pair(timeout: .seconds(10)) }
            #expect(error?.code == .authenticationFailed)
            #expect(error?.dbusErrorName == BlueZErrorName.authenticationFailed)

            let other = try await central.connect(try PeripheralID(address: refusing.address), timeout: .seconds(10))
            let rejected = await bleError { try await other.pair(timeout: .seconds(10)) }
            #expect(rejected?.code == .authenticationFailed)
            #expect(rejected?.dbusErrorName == BlueZErrorName.authenticationRejected)
            await central.close()
        }
    }

    @Test("cancelling pair() cancels the pairing: the handler is told, nothing is paired")
    func cancellation() async throws {
        let handler = ScriptedPairing(.keyboardOnly, .wait)
        try await SimulatorFixture.withPairing(handler: handler) { _, peripheral in
            let pairing = Task { try await peripheral.pair(timeout: .seconds(30)) }
            try await eventually("the handler asked") { !handler.questions.isEmpty }
            pairing.cancel()
            let error = await bleError { try await pairing.value }
            #expect(error?.code == .cancelled)
            try await eventually("bluetoothd cancelled the request") { handler.questions.last == "cancelled" }
            #expect(await !peripheral.isPaired)
        }
    }

    @Test("past its deadline pair() fails with timeout and cancels the pairing")
    func timeout() async throws {
        let handler = ScriptedPairing(.keyboardOnly, .wait)
        try await SimulatorFixture.withPairing(handler: handler) { _, peripheral in
            let error = await bleError { try await peripheral.pair(timeout: .seconds(1)) }
            #expect(error?.code == .timeout)
            // On a loaded machine the deadline can pass before bluetoothd asked anything; once
            // the handler was asked, it must be told the request is over.
            if !handler.questions.isEmpty {
                try await eventually("bluetoothd cancelled the request") { handler.questions.last == "cancelled" }
            }
            #expect(await !peripheral.isPaired)
        }
    }

    @Test("bluetoothd giving up on the agent: timeout with AuthenticationTimeout, the handler told")
    func bluetoothdTimeout() async throws {
        var options = SimulatorOptions()
        options.pairingTimeout = .milliseconds(300)
        let handler = ScriptedPairing(.keyboardOnly, .wait)
        try await SimulatorFixture.withPairing(options: options, handler: handler) { _, peripheral in
            let error = await bleError { try await peripheral.pair(timeout: .seconds(10)) }
            #expect(error?.code == .timeout)
            #expect(error?.dbusErrorName == BlueZErrorName.authenticationTimeout)
            try await eventually("the handler told") { handler.questions.last == "cancelled" }
        }
    }

    @Test("a handler that never answers: the agent answers Canceled in time, pairing fails cleanly")
    func handlerHangs() async throws {
        let handler = ScriptedPairing(.keyboardOnly, .hang)
        try await SimulatorFixture.withPairing(handler: handler, answerTimeout: .milliseconds(200)) { _, peripheral in
            let error = await bleError { try await peripheral.pair(timeout: .seconds(10)) }
            #expect(error?.code == .authenticationFailed)
            #expect(await !peripheral.isPaired)
        }
    }

    @Test("forget disconnects, removes the bond and the device; unknown ids are fine")
    func forget() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected()
            try await peripheral.pair(timeout: .seconds(10))
            let events = peripheral.events
            try await central.forget(peripheral.id)
            #expect(await central.knownPeripherals().isEmpty)
            #expect(await !peripheral.isPaired)
            let down = try await first(events) { if case .disconnected = $0 { true } else { false } }
            #expect(down == .disconnected(.local))
            #expect(await !peripheral.isConnected)
            try await central.forget(try PeripheralID(address: "00:11:22:33:44:55"))
            await central.close()
        }
    }

    @Test("a bond survives a bluetoothd restart; the agent is registered again for the next pairing")
    func bondSurvivesRestart() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected()
            try await peripheral.pair(timeout: .seconds(10))
            try await peripheral.disconnect()
            try await fixture.simulator.restartDaemon()
            try await central.waitUntilPoweredOn(timeout: .seconds(10))
            try await eventually("the bonded device is back") {
                await central.knownPeripherals().first?.isPaired == true
            }
            try await central.forget(peripheral.id)
            _ = try #require(try await first(central.scan()) { $0.id == peripheral.id })
            let again = try await central.connect(peripheral.id, timeout: .seconds(10))
            try await again.pair(timeout: .seconds(10))
            #expect(await again.isPaired)
            await central.close()
        }
    }
}
