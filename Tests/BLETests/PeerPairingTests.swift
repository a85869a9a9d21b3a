import BLE
import BLESimulator
import DBus
import Foundation
import Testing

/// Pairings the peripheral starts (an SMP Security Request), answered through the central's
/// ``PairingHandler`` with no `pair()` call, against the simulator's bluetoothd.
@Suite("Peer-started pairing", .timeLimit(.minutes(1)))
struct PeerPairingTests {
    static let monitor = SimulatorFixture.heartRateAddress

    /// The heart-rate monitor asking for `level` as soon as it is connected.
    static func demanding(
        _ level: SimulatedPairing.SecurityLevel, _ capability: SimulatedPairing.IOCapability = .noInputNoOutput,
        passkey: UInt32 = 654_321
    ) -> VirtualPeripheral {
        var peer = SimulatorFixture.pairingMonitor(capability, passkey: passkey)
        peer.pairing.requestsSecurity = level
        return peer
    }

    /// Waits for `.pairingChanged(isPaired: true)` unless `peripheral` is paired already
    /// (subscribed first, so a change between the two cannot be missed).
    static func bonded(_ peripheral: Peripheral) async throws {
        let events = peripheral.events
        if await peripheral.isPaired { return }
        let event = try await first(events) { $0 == .pairingChanged(isPaired: true) }
        #expect(event == .pairingChanged(isPaired: true))
        #expect(await peripheral.isPaired)
    }

    @Test("Just Works asked for by the peer bonds through the default handler, without pair()")
    func justWorksWithDefaultHandler() async throws {
        try await SimulatorFixture.run(peripherals: [Self.demanding(.encrypted)]) { fixture in
            let central = try await fixture.poweredCentral()
            let peripheral = try await central.connect(try PeripheralID(address: Self.monitor), timeout: .seconds(10))
            try await Self.bonded(peripheral)
            #expect(await central.knownPeripherals().first?.isPaired == true)
            await central.close()
        }
    }

    @Test("the handler is asked to authorize it; reconnected, the bonded peripheral is not paired again")
    func authorizeOnceThenEncryptOnly() async throws {
        let handler = ScriptedPairing(.displayYesNo, .answer(passkey: 0))
        try await SimulatorFixture.run(peripherals: [Self.demanding(.encrypted)]) { fixture in
            let (central, peripheral) = try await fixture.connected(options: SimulatorFixture.pairingOptions(handler))
            try await Self.bonded(peripheral)
            #expect(handler.questions == ["authorize hci0/\(Self.monitor)"])
            try await peripheral.disconnect()
            let again = try await central.connect(peripheral.id, timeout: .seconds(10))
            // The peer asks again on every connection; with the bond in place the link is only
            // encrypted, so a request made now starts nothing and nobody is asked.
            #expect(try fixture.simulator.requestSecurity(address: Self.monitor, level: .encrypted) == 0)
            #expect(handler.questions == ["authorize hci0/\(Self.monitor)"])
            #expect(await again.isPaired)
            await central.close()
        }
    }

    @Test(
        "a peer requiring authentication: the handler enters the passkey or confirms the number",
        arguments: [
            (PairingCapability.keyboardOnly, SimulatedPairing.IOCapability.displayOnly, "passkey"),
            (.displayYesNo, .displayYesNo, "confirm 654321"),
        ])
    func authenticated(capability: PairingCapability, peer: SimulatedPairing.IOCapability, question: String)
        async throws
    {
        let handler = ScriptedPairing(capability, .answer(passkey: 654_321))
        try await SimulatorFixture.run(peripherals: [SimulatorFixture.pairingMonitor(peer)]) { fixture in
            let (central, peripheral) = try await fixture.connected(
                options: SimulatorFixture.pairingOptions(handler))
            #expect(try fixture.simulator.requestSecurity(address: Self.monitor, level: .authenticated) == 1)
            try await Self.bonded(peripheral)
            #expect(handler.questions == ["\(question) hci0/\(Self.monitor)"])
            await central.close()
        }
    }

    @Test("a refusing handler: not paired, the link stays up, reads work, pair() still bonds")
    func handlerRefuses() async throws {
        let handler = ScriptedPairing(.displayYesNo, .refuse)
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected(options: SimulatorFixture.pairingOptions(handler))
            #expect(try fixture.simulator.requestSecurity(address: Self.monitor, level: .encrypted) == 1)
            try await eventually("the handler asked") { handler.questions == ["authorize hci0/\(Self.monitor)"] }
            // A new request starts only once the refused one is over, and only without a bond.
            try await eventually("the refused pairing ended without a bond") {
                (try? fixture.simulator.requestSecurity(address: Self.monitor, level: .encrypted)) == 1
            }
            #expect(await !peripheral.isPaired)
            #expect(await peripheral.isConnected)
            let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            #expect(try await location.read() == Data([0x01]))
            // An authenticated one fails too (this peer cannot do MITM); then pair()'s own Just
            // Works is accepted without asking.
            try await eventually("the second pairing ended") {
                (try? fixture.simulator.requestSecurity(address: Self.monitor, level: .authenticated)) == 1
            }
            try await eventually("pair() once no pairing runs") {
                do throws(BLEError) {
                    try await peripheral.pair(timeout: .seconds(10))
                    return true
                } catch {
                    // One made while the failing pairing runs ends with it.
                    #expect(error.code == .authenticationFailed, "\(error)")
                    return false
                }
            }
            #expect(await peripheral.isPaired)
            await central.close()
        }
    }

    @Test("a peer demanding an authenticated key from a NoInputNoOutput handler: no question, no bond")
    func authenticationImpossible() async throws {
        let handler = ScriptedPairing(.noInputNoOutput, .answer(passkey: 0))
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected(options: SimulatorFixture.pairingOptions(handler))
            #expect(try fixture.simulator.requestSecurity(address: Self.monitor, level: .authenticated) == 1)
            try await eventually("the failed pairing ended without a bond") {
                (try? fixture.simulator.requestSecurity(address: Self.monitor, level: .encrypted)) == 1
            }
            // The encrypted request that followed is Just Works: authorized, and it bonds.
            try await Self.bonded(peripheral)
            #expect(handler.questions == ["authorize hci0/\(Self.monitor)"])
            await central.close()
        }
    }

    @Test("pairingChanged: not for a bluetoothd restart (the bond is kept), false once forgotten")
    func pairingChangedFollowsTheBond() async throws {
        try await SimulatorFixture.run(peripherals: [Self.demanding(.encrypted)]) { fixture in
            let (central, peripheral) = try await fixture.connected()
            try await Self.bonded(peripheral)
            let seen = PosixMutex<[ConnectionEvent]>([])
            let events = peripheral.events
            let recorder = Task {
                for await event in events {
                    if case .pairingChanged = event { seen.withLock { $0.append(event) } }
                }
            }
            defer { recorder.cancel() }
            try await fixture.simulator.restartDaemon()
            try await central.waitUntilPoweredOn(timeout: .seconds(10))
            try await eventually("the bonded device is back") {
                await central.knownPeripherals().first?.isPaired == true
            }
            try await central.forget(peripheral.id)
            try await eventually("the bond's removal reported") { !seen.withLock { $0 }.isEmpty }
            #expect(seen.withLock { $0 } == [.pairingChanged(isPaired: false)])
            #expect(await !peripheral.isPaired)
            await central.close()
        }
    }
}
