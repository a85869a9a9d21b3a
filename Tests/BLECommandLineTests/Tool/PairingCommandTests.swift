import BLE
import BLESimulator
import Foundation
import Testing

@testable import BLECommandLine

/// `ble pair`, `ble unpair` and `ble trust` against the simulator, which pairs by the SMP
/// method both IO capabilities give (the tool is a keyboard and display).
@Suite(.serialized) struct PairingCommandTests {
    static let address = CLIFixture.monitor

    /// The default peripherals, the heart-rate monitor pairing as `capability` with `passkey`.
    static func peripherals(_ capability: SimulatedPairing.IOCapability, passkey: UInt32 = 246_810)
        -> [VirtualPeripheral]
    {
        var peripherals = CLIFixture.peripherals()
        peripherals[0].pairing.ioCapability = capability
        peripherals[0].pairing.passkey = passkey
        return peripherals
    }

    /// The device as `ble info --json` shows it.
    static func info(_ fixture: CLIFixture) async throws -> [String: Any] {
        let outcome = try await fixture.ble("info", address, "--json")
        #expect(outcome.status == 0, "\(outcome.errors)")
        return try #require(try JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: Any])
    }

    @Test("Just Works: paired, the link left down as found; again: already paired; unpair forgets it")
    func justWorksThenUnpair() async throws {
        try await CLIFixture.run { fixture in
            let paired = try await fixture.ble("pair", Self.address)
            #expect(paired.status == 0, "\(paired.errors)")
            #expect(paired.output == "\(Self.address): paired\n")
            let after = try await Self.info(fixture)
            #expect(after["paired"] as? Bool == true)
            #expect(after["connected"] as? Bool == false, "the link is left as the tool found it")
            #expect(try await fixture.ble("pair", Self.address).output == "\(Self.address): already paired\n")

            let forgotten = try await fixture.ble("unpair", Self.address)
            #expect(forgotten.status == 0, "\(forgotten.errors)")
            #expect(forgotten.output == "\(Self.address): unpaired (bluetoothd forgot it)\n")
            #expect(try await !fixture.ble("devices").output.contains(Self.address))
            let again = try await fixture.ble("unpair", Self.address)
            #expect(again.output == "\(Self.address): not known to bluetoothd\n")
        }
    }

    @Test("passkey entry: --passkey answers it; without it the tool says which option does; a wrong one is refused")
    func passkeyEntry() async throws {
        try await CLIFixture.run(peripherals: Self.peripherals(.displayOnly)) { fixture in
            let unanswered = try await fixture.ble("pair", Self.address)
            #expect(unanswered.status == ExitCode.refused)
            #expect(unanswered.errors.contains("shows a passkey: give it with --passkey"))
            let wrong = try await fixture.ble("pair", Self.address, "--passkey", "111111")
            #expect(wrong.status == ExitCode.refused)
            let refused = try await Self.info(fixture)
            #expect(refused["paired"] as? Bool == false)
            #expect(refused["connected"] as? Bool == false, "a failed pairing leaves the link as found too")

            let right = try await fixture.ble("pair", Self.address, "--passkey", "246810")
            #expect(right.status == 0, "\(right.errors)")
            #expect(right.output == "\(Self.address): paired\n")
            #expect(try await Self.info(fixture)["paired"] as? Bool == true)
        }
    }

    @Test("numeric comparison: --yes confirms it; without it the tool shows the number and refuses")
    func numericComparison() async throws {
        try await CLIFixture.run(peripherals: Self.peripherals(.displayYesNo, passkey: 13_579)) { fixture in
            let unconfirmed = try await fixture.ble("pair", Self.address)
            #expect(unconfirmed.status == ExitCode.refused)
            #expect(unconfirmed.errors.contains("show 013579? confirm with --yes"))

            let confirmed = try await fixture.ble("pair", Self.address, "--yes")
            #expect(confirmed.status == 0, "\(confirmed.errors)")
            #expect(try await Self.info(fixture)["paired"] as? Bool == true)
        }
    }

    @Test("passkey display: the passkey to type on the device is printed")
    func passkeyDisplay() async throws {
        try await CLIFixture.run(peripherals: Self.peripherals(.keyboardOnly, passkey: 42)) { fixture in
            let paired = try await fixture.ble("pair", Self.address)
            // The simulated peripheral types whatever the agent shows.
            #expect(paired.status == 0, "\(paired.errors)")
            #expect(paired.errors.contains("type 000042 on \(Self.address)"))
        }
    }

    @Test("trust needs no link, only a device bluetoothd knows; on and off; anything else is a usage error")
    func trust() async throws {
        try await CLIFixture.run { fixture in
            let unknown = try await fixture.ble("trust", Self.address)
            #expect(unknown.status == ExitCode.notFound)
            #expect(unknown.errors.contains("does not know \(Self.address)"))

            _ = try await fixture.ble("connect", Self.address)
            _ = try await fixture.ble("disconnect", Self.address)
            let trusted = try await fixture.ble("trust", Self.address)
            #expect(trusted.status == 0, "\(trusted.errors)")
            #expect(trusted.output == "\(Self.address): trusted\n")
            #expect(try await Self.info(fixture)["trusted"] as? Bool == true)
            #expect(try await fixture.ble("trust", Self.address, "off").output == "\(Self.address): not trusted\n")
            #expect(try await Self.info(fixture)["trusted"] as? Bool == false)
            #expect(try await fixture.ble("trust", Self.address, "sideways").status == ExitCode.usage)
        }
    }
}
