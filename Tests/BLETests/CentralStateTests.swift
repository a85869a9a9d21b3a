import BLE
import BLESimulator
import DBusTestSupport
import Testing

@Suite("Central state")
struct CentralStateTests {
    @Test("a powered adapter is poweredOn")
    func poweredOn() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.central()
            try await central.waitUntilPoweredOn(timeout: .seconds(10))
            #expect(await central.state == .poweredOn)
            #expect(await central.adapters() == ["hci0"])
            await central.close()
        }
    }

    @Test("power off and on are seen in states")
    func powerCycle() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.central()
            try await central.waitUntilPoweredOn(timeout: .seconds(10))
            let states = central.states
            fixture.simulator.setPowered(false)
            #expect(try await first(states) { $0 == .poweredOff } == .poweredOff)
            try await central.setPowered(true)
            #expect(try await first(central.states) { $0 == .poweredOn } == .poweredOn)
            await central.close()
        }
    }

    @Test("setPowered returns once the state says so (bluetoothd announces Powered after its reply)")
    func setPoweredReturnsWithTheState() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            try await central.setPowered(false)
            #expect(await central.state == .poweredOff)
            try await central.setPowered(true)
            #expect(await central.state == .poweredOn)
            // The value it has: bluetoothd replies without a signal, and so does the call.
            try await central.setPowered(true)
            #expect(await central.state == .poweredOn)
            await central.close()
        }
    }

    @Test("bluetoothd restarting is resetting, then back")
    func restart() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.central()
            try await central.waitUntilPoweredOn(timeout: .seconds(10))
            let states = central.states
            async let restarted: Void = fixture.simulator.restartDaemon(downtime: .milliseconds(300))
            #expect(try await first(states) { $0 == .resetting } == .resetting)
            try await restarted
            try await central.waitUntilPoweredOn(timeout: .seconds(10))
            await central.close()
        }
    }

    @Test("no adapter is unsupported")
    func noAdapter() async throws {
        var options = SimulatorOptions()
        options.adapters = []
        try await SimulatorFixture.run(options: options) { fixture in
            let central = fixture.ledger.track(try await Central(bus: .address(fixture.bus.address)))
            #expect(await central.state == .unsupported)
            await central.close()
        }
    }

    @Test("bluetoothd never seen is unknown, then the state follows it when it appears")
    func unknownUntilBluetoothdAppears() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let central = try await Central(bus: .address(bus.address), adapter: "hci0")
        #expect(await central.state == .unknown)
        let states = central.states
        let simulator = try await Simulator.start(on: .address(bus.address))
        defer { simulator.stop() }
        #expect(try await first(states) { $0 == .poweredOn } == .poweredOn)
        #expect(await central.adapters() == ["hci0"])
        await central.close()
    }

    @Test("during a restart the state is resetting; it recovers when bluetoothd is back")
    func resettingDuringRestart() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            let states = central.states
            // A downtime long enough that bluetoothd is still away when the state is read below,
            // even when the whole suite loads the machine (1 s once was not).
            let restart = Task { try await fixture.simulator.restartDaemon(downtime: .seconds(5)) }
            #expect(try await first(states) { $0 == .resetting } == .resetting)
            #expect(await central.state == .resetting)
            try await restart.value
            #expect(try await first(central.states) { $0 == .poweredOn } == .poweredOn)
            await central.close()
        }
    }

    @Test("an adapter that does not exist is unsupported, and waiting for it fails at once")
    func missingAdapter() async throws {
        try await SimulatorFixture.run { fixture in
            let central = fixture.ledger.track(try await Central(bus: .address(fixture.bus.address), adapter: "hci7"))
            #expect(await central.state == .unsupported)
            // Ended by the state it found, not by its deadline: that would throw timeout.
            let error = await bleError { try await central.waitUntilPoweredOn(timeout: .seconds(30)) }
            #expect(error?.code == .unsupported)
            await central.close()
        }
    }

    @Test("a malformed adapter name is refused")
    func malformedAdapterName() async throws {
        try await SimulatorFixture.run { fixture in
            let error = await bleError { try await Central(bus: .address(fixture.bus.address), adapter: "bluetooth") }
            #expect(error?.code == .invalidArguments)
        }
    }

    @Test("an adapter off at start is poweredOff; waiting times out")
    func poweredOffTimesOut() async throws {
        var options = SimulatorOptions()
        options.poweredOnStart = false
        try await SimulatorFixture.run(options: options) { fixture in
            let central = try await fixture.central()
            #expect(await central.state == .poweredOff)
            // The adapter powers on 5 s later (under the 10 s default deadline): a wait that
            // outlived its own 200 ms deadline would end after that, if not succeed.
            let powerOn = LaterEvent(after: .seconds(5)) { fixture.simulator.setPowered(true) }
            let error = await bleError { try await central.waitUntilPoweredOn(timeout: .milliseconds(200)) }
            #expect(error?.code == .timeout)
            #expect(!powerOn.hasBegun, "timed out before the adapter powered on")
            try await powerOn.happened()
            try await central.waitUntilPoweredOn(timeout: .seconds(10))
            await central.close()
        }
    }

    @Test("waiting succeeds when the adapter powers on meanwhile")
    func waitSucceedsWhenPoweredOn() async throws {
        var options = SimulatorOptions()
        options.poweredOnStart = false
        try await SimulatorFixture.run(options: options) { fixture in
            let central = try await fixture.central()
            let waiter = Task { try await central.waitUntilPoweredOn(timeout: .seconds(10)) }
            #expect(await central.state == .poweredOff)
            try await central.setPowered(true)
            try await waiter.value
            #expect(await central.state == .poweredOn)
            await central.close()
        }
    }

    @Test("adapters are listed and each central follows the one it chose")
    func chooseAdapter() async throws {
        var options = SimulatorOptions()
        options.adapters = ["00:1A:7D:DA:71:13", "00:1A:7D:DA:71:14"]
        try await SimulatorFixture.run(options: options) { fixture in
            let primary = fixture.ledger.track(try await Central(bus: .address(fixture.bus.address)))
            let secondary = fixture.ledger.track(try await Central(bus: .address(fixture.bus.address), adapter: "hci1"))
            #expect(primary.adapterName == "hci0", "the first adapter by default")
            #expect(secondary.adapterName == "hci1")
            #expect(await primary.adapters() == ["hci0", "hci1"])
            let states = secondary.states
            fixture.simulator.setPowered(false, adapter: 1)
            #expect(try await first(states) { $0 == .poweredOff } == .poweredOff)
            #expect(await primary.state == .poweredOn)
            await primary.close()
            await secondary.close()
        }
    }

    @Test("states: the current value first, then changes; it ends when the central closes")
    func statesStream() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            var states = central.states.makeAsyncIterator()
            #expect(await states.next() == .poweredOn)
            try await central.setPowered(false)
            #expect(await states.next() == .poweredOff)
            await central.close()
            #expect(await states.next() == nil)
        }
    }
}
