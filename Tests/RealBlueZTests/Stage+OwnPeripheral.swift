import BLE
import BLESimulator
import DBus
import DBusTestSupport
import Foundation

extension Stage {
    /// The two adapters of the simulated machine: btvirt's addresses, so both backends name
    /// the peripheral alike.
    static let simulatedAdapters = ["00:AA:01:00:00:00", "00:AA:01:01:00:01"]

    /// Runs `body` with our own ``PeripheralManager`` serving ``OwnPeripheralLayout`` on hci1
    /// and a stage whose central (on hci0) looks for it; the manager is closed afterwards.
    static func runOwn(_ body: (Stage, OwnPeripheral) async throws -> Void) async throws {
        switch Backend.current {
        case .simulator: try await runOwnSimulated(body)
        case .bluez: try await runOwnReal(body)
        }
    }

    /// Runs `body` with a central connected to our own peripheral; disconnects and closes the
    /// central afterwards.
    static func runOwnConnected(_ body: @escaping (Stage, OwnPeripheral, Peripheral) async throws -> Void)
        async throws
    {
        try await runOwn { stage, own in
            let (central, peripheral) = try await stage.connected()
            try await body(stage, own, peripheral)
            try await peripheral.disconnect()
            await central.close()
        }
    }

    /// Simulator with two adapters: the manager registers on the simulated hci1, whose
    /// registrations the simulator makes a peripheral in range of hci0.
    private static func runOwnSimulated(_ body: (Stage, OwnPeripheral) async throws -> Void) async throws {
        let testBus = try TestBus()
        defer { testBus.stop() }
        var options = SimulatorOptions()
        options.adapters = simulatedAdapters
        let simulator = try await Simulator.start(on: .address(testBus.address), options: options)
        defer { simulator.stop() }
        let address = simulatedAdapters[1]
        let own = try await OwnPeripheral.start(
            bus: .address(testBus.address), adapter: peripheralAdapter,
            id: try PeripheralID(adapter: centralAdapter, address: address),
            central: try CentralID(adapter: peripheralAdapter, address: simulatedAdapters[0]), readvertising: false,
            l2capTransport: simulator.l2capTransport
        ) { try simulator.dropLink(address: address, reason: .remote) }
        let stage = Stage(
            backend: .simulator, driver: own, bus: .address(testBus.address), service: OwnPeripheralLayout.service,
            l2capTransport: simulator.l2capTransport)
        try await running(body, stage, own)
    }

    /// The real daemon: the manager registers on hci1 beside peripheral.py (another service
    /// UUID and name; bluetoothd serves both applications). peripheral.py stops advertising
    /// meanwhile: two advertisements re-registered every half second made hci1's advertising
    /// enable fail now and then (EBUSY), and connects to hci1 fail more often then.
    private static func runOwnReal(_ body: (Stage, OwnPeripheral) async throws -> Void) async throws {
        let connection = try await Connection(bus: .system)
        defer { connection.close() }
        let peripheralAddress = try await RealDaemonCalls.address(of: peripheralAdapter, on: connection)
        let central = try CentralID(
            adapter: peripheralAdapter, address: try await RealDaemonCalls.address(of: centralAdapter, on: connection))
        let id = try PeripheralID(adapter: centralAdapter, address: peripheralAddress)
        try await RealDaemonCalls.forget(id, on: connection)
        try await ScriptedPeripheral.setQuiet(true, on: connection)
        do {
            // Inside: a manager that cannot start must not leave peripheral.py quiet for the
            // suites that follow.
            let own = try await OwnPeripheral.start(
                bus: .system, adapter: peripheralAdapter, id: id, central: central, readvertising: true
            ) { try await RealDaemonCalls.disconnect(central: central, on: connection) }
            let stage = Stage(backend: .bluez, driver: own, bus: .system, service: OwnPeripheralLayout.service)
            try await running(body, stage, own)
        } catch {
            try? await ScriptedPeripheral.setQuiet(false, on: connection)
            throw error
        }
        try await ScriptedPeripheral.setQuiet(false, on: connection)
    }

    /// Runs `body` on the stage for `own`, closing the manager on every exit.
    private static func running(
        _ body: (Stage, OwnPeripheral) async throws -> Void, _ stage: Stage, _ own: OwnPeripheral
    ) async throws {
        do {
            try await body(stage, own)
        } catch {
            await own.close()
            throw error
        }
        await own.close()
    }
}
