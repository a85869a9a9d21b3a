import BLE
import Testing

extension AgainstBluetoothd {
    /// Pairing through the central's agent. On the real daemon one bluetoothd serves both
    /// adapters, so the peripheral side's confirmation of the peer-started (Just Works) pairing
    /// reaches the default agent too, which is the central's when it is the only one.
    @Suite("Pairing")
    struct PairingTests {
        /// Just Works that also accepts pairings a peer starts.
        struct AcceptingPairing: PairingHandler {
            var capability: PairingCapability { .noInputNoOutput }
            func authorize(_ peripheral: PeripheralID) async -> Bool { true }
        }

        @Test("Just Works pairs and bonds; forget drops the bond on both sides")
        func justWorks() async throws {
            try await Stage.run { stage in
                let (central, peripheral) = try await stage.connected { $0.pairingHandler = AcceptingPairing() }
                #expect(await !peripheral.isPaired)
                try await peripheral.pair(timeout: .seconds(60))
                #expect(await peripheral.isPaired)
                try await central.forget(peripheral.id)
                #expect(await !central.knownPeripherals().contains { $0.id == peripheral.id })
                // The peripheral's adapter bonded with the central too (on the real daemon).
                let other = try await Central(bus: stage.bus, adapter: Stage.peripheralAdapter)
                for known in await other.knownPeripherals() where known.isPaired {
                    try await other.forget(known.id)
                }
                await other.close()
                await central.close()
            }
        }
    }
}
