import BLE
import Testing

extension AgainstBluetoothd {
    /// Adapter state and power, followed from the adapter's properties.
    @Suite("Adapter")
    struct AdapterTests {
        @Test("the central's adapter is powered on and listed")
        func poweredOn() async throws {
            try await Stage.run { stage in
                let central = try await stage.central()
                #expect(await central.state == .poweredOn)
                #expect(await central.adapters().contains(Stage.centralAdapter))
            }
        }

        @Test("powering off and on is followed by the state stream")
        func powerCycle() async throws {
            try await Stage.run { stage in
                let central = try await stage.central()
                let states = central.states
                try await central.setPowered(false)
                _ = try await within(.seconds(20), "poweredOff") {
                    for await state in states where state == .poweredOff { return state }
                    throw StageError(description: "the state stream ended")
                }
                #expect(await central.state == .poweredOff)
                try await central.setPowered(true)
                try await central.waitUntilPoweredOn(timeout: .seconds(20))
                #expect(await central.state == .poweredOn)
            }
        }
    }
}
