import BLE
import BLESimulator
import DBus
import Foundation
import Testing

/// A ``PairingHandler`` a test scripts: its capability, its answers, and whether it answers at
/// all; it records every question with the peripheral it was about.
final class ScriptedPairing: PairingHandler {
    enum Behaviour: Sendable {
        /// Answers with this passkey, and yes to every question.
        case answer(passkey: UInt32)
        /// Says no (nil passkey, false).
        case refuse
        /// Waits until cancelled.
        case wait
        /// Never answers, ignoring cancellation too.
        case hang
    }

    let capability: PairingCapability
    private let behaviour: Behaviour
    private let log = PosixMutex<[String]>([])

    init(_ capability: PairingCapability, _ behaviour: Behaviour) {
        self.capability = capability
        self.behaviour = behaviour
    }

    /// The questions asked, e.g. `passkey hci0/C4:…`, and `cancelled`.
    var questions: [String] { log.withLock { $0 } }

    private func asked(_ text: String) async -> Bool {
        log.withLock { $0.append(text) }
        switch behaviour {
        case .answer: return true
        case .refuse: return false
        case .wait:
            try? await Task.sleep(for: .seconds(3600))
            return false
        case .hang:
            let end = ContinuousClock.now + .seconds(5)
            while ContinuousClock.now < end { _ = try? await Task.sleep(for: .milliseconds(10)) }
            return false
        }
    }

    func passkey(for peripheral: PeripheralID) async -> UInt32? {
        guard await asked("passkey \(peripheral)"), case .answer(let passkey) = behaviour else { return nil }
        return passkey
    }

    func confirm(passkey: UInt32, for peripheral: PeripheralID) async -> Bool {
        await asked("confirm \(passkey) \(peripheral)")
    }

    func display(passkey: UInt32, entered: UInt16, for peripheral: PeripheralID) async {
        log.withLock { $0.append("display \(passkey) \(peripheral)") }
    }

    func authorize(_ peripheral: PeripheralID) async -> Bool { await asked("authorize \(peripheral)") }

    func cancelled() { log.withLock { $0.append("cancelled") } }
}

extension SimulatorFixture {
    /// The heart-rate monitor with a pairing behaviour.
    static func pairingMonitor(_ capability: SimulatedPairing.IOCapability, passkey: UInt32 = 654_321)
        -> VirtualPeripheral
    {
        var monitor = heartRateMonitor()
        monitor.pairing = SimulatedPairing(ioCapability: capability, passkey: passkey)
        return monitor
    }

    /// Central options with `handler`.
    static func pairingOptions(_ handler: any PairingHandler, answerTimeout: Duration = .seconds(25))
        -> CentralOptions
    {
        var options = CentralOptions()
        options.pairingHandler = handler
        options.pairingAnswerTimeout = answerTimeout
        return options
    }
}

extension SimulatorFixture {
    /// Runs `body` on a fresh simulator with `peer`, and a central whose pairing handler is
    /// `handler` connected to it; closes the central afterwards.
    static func withPairing(
        _ peer: VirtualPeripheral = pairingMonitor(.displayOnly), options: SimulatorOptions = SimulatorOptions(),
        handler: ScriptedPairing, answerTimeout: Duration = .seconds(25),
        _ body: (Central, Peripheral) async throws -> Void
    ) async throws {
        try await run(options: options, peripherals: [peer]) { fixture in
            let (central, peripheral) = try await fixture.connected(
                peer.address, options: pairingOptions(handler, answerTimeout: answerTimeout))
            try await body(central, peripheral)
            await central.close()
        }
    }
}

/// The ``BLEError`` `body` throws when `succeeds` is false; when true, `body` must succeed
/// and the result is nil.
func bleError(ifNot succeeds: Bool, _ body: () async throws -> Void) async -> BLEError? {
    guard succeeds else { return await bleError(body) }
    do { try await body() } catch { Issue.record("expected success, got \(error)") }
    return nil
}
