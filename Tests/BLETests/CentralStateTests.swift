import BLE
import BLESimulator
import Testing

@Suite("Central state")
struct CentralStateTests {
    @Test("a powered adapter is poweredOn")
    func poweredOn() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.central()
            try await central.waitUntilPoweredOn(timeout: .seconds(5))
            #expect(await central.state == .poweredOn)
            #expect(await central.adapters() == ["hci0"])
            await central.close()
        }
    }

    @Test("power off and on are seen in states")
    func powerCycle() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.central()
            try await central.waitUntilPoweredOn(timeout: .seconds(5))
            let states = central.states
            fixture.simulator.setPowered(false)
            #expect(try await first(states) { $0 == .poweredOff } == .poweredOff)
            try await central.setPowered(true)
            #expect(try await first(central.states) { $0 == .poweredOn } == .poweredOn)
            await central.close()
        }
    }

    @Test("bluetoothd restarting is resetting, then back")
    func restart() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.central()
            try await central.waitUntilPoweredOn(timeout: .seconds(5))
            let states = central.states
            async let restarted: Void = fixture.simulator.restartDaemon(downtime: .milliseconds(300))
            #expect(try await first(states) { $0 == .resetting } == .resetting)
            try await restarted
            try await central.waitUntilPoweredOn(timeout: .seconds(5))
            await central.close()
        }
    }

    @Test("no adapter is unsupported")
    func noAdapter() async throws {
        var options = SimulatorOptions()
        options.adapters = []
        try await SimulatorFixture.run(options: options) { fixture in
            let central = try await Central(bus: .address(fixture.bus.address))
            #expect(await central.state == .unsupported)
            await central.close()
        }
    }
}
