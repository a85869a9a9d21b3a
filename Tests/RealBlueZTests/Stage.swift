import BLE
import BLESimulator
import BlueZ
import DBus
import DBusTestSupport
import Foundation

/// One test's world: a bluetoothd (simulated or real) with the test peripheral in range of
/// adapter hci0, and the driver of that peripheral.
struct Stage: Sendable {
    let backend: Backend
    let driver: any PeripheralDriver
    let bus: Bus
    /// The service the test peripheral advertises and serves.
    var service = TestPeripheralLayout.service
    /// Where L2CAP channels come from: the kernel's sockets, or the simulator's.
    var l2capTransport: any L2CAPTransport = KernelL2CAPTransport()

    static let centralAdapter = "hci0"
    static let peripheralAdapter = "hci1"
    static let simulatedAddress = "C0:FF:EE:00:00:01"

    /// Runs `body` on the current backend (see ``Backend/current``).
    static func run(_ body: (Stage) async throws -> Void) async throws {
        switch Backend.current {
        case .simulator: try await runSimulated(body)
        case .bluez: try await runReal(body)
        }
    }

    private static func runSimulated(_ body: (Stage) async throws -> Void) async throws {
        let testBus = try TestBus()
        defer { testBus.stop() }
        let simulator = try await Simulator.start(
            on: .address(testBus.address), profile: .v5_66,
            peripherals: [TestPeripheralLayout.virtualPeripheral(address: simulatedAddress)])
        defer { simulator.stop() }
        let probe = try await testBus.connect()
        defer { probe.close() }
        let driver = SimulatedPeripheral(
            simulator: simulator, probe: probe, address: simulatedAddress,
            id: try PeripheralID(adapter: centralAdapter, address: simulatedAddress))
        try await body(Stage(backend: .simulator, driver: driver, bus: .address(testBus.address)))
    }

    private static func runReal(_ body: (Stage) async throws -> Void) async throws {
        let driver = try await ScriptedPeripheral.attach(adapter: peripheralAdapter, centralAdapter: centralAdapter)
        defer { driver.close() }
        try await body(Stage(backend: .bluez, driver: driver, bus: .system))
    }

    /// A central on hci0.
    func central(_ change: (inout CentralOptions) -> Void = { _ in }) async throws -> Central {
        var options = CentralOptions()
        if ProcessInfo.processInfo.environment["SWIFT_BLE_TRACE"] == "1" {
            // What the SDK says to bluetoothd and hears back, for a failure that needs a closer look.
            options.logger = BLELogger(level: .trace) { _, message, _ in print("trace: \(message)") }
        } else if backend == .bluez {
            // How often the real daemon needs the SDK's repairs (a re-read, a second attempt).
            options.logger = BLELogger(level: .info) { _, message, _ in print("info: \(message)") }
        }
        options.l2capTransport = l2capTransport
        change(&options)
        let central = try await Central(bus: bus, adapter: Self.centralAdapter, options: options)
        try await central.waitUntilPoweredOn(timeout: .seconds(20))
        return central
    }

    /// A central connected to the test peripheral (found by a scan for its service first, as
    /// an app would).
    func connected(_ change: (inout CentralOptions) -> Void = { _ in }) async throws -> (Central, Peripheral) {
        let central = try await central(change)
        let id = driver.id
        let scan = central.scan(services: [service])
        // The scan runs until the Connect is answered, as the SDK's own targeted scan does:
        // bluetoothd drops a temporary device it last saw as not connectable when discovery
        // stops (adapter.c discovery_cleanup), which can fall between a scan and a Connect.
        let (found, seen) = AsyncStream<Void>.makeStream()
        let scanning = Task {
            defer { seen.finish() }
            for try await discovery in scan where discovery.id == id { seen.yield() }
        }
        defer { scanning.cancel() }
        _ = try await within(.seconds(30), "a scan finding \(id)") {
            for await _ in found { return true }
            throw StageError(description: "the scan ended")
        }
        return (central, try await central.connect(id, timeout: .seconds(30)))
    }

    /// Runs `body` with a central connected to the test peripheral; disconnects and closes
    /// the central afterwards.
    static func runConnected(
        _ change: @escaping (inout CentralOptions) -> Void = { _ in },
        _ body: @escaping (Stage, Peripheral) async throws -> Void
    ) async throws {
        try await run { stage in
            let (central, peripheral) = try await stage.connected(change)
            try await body(stage, peripheral)
            try await peripheral.disconnect()
            await central.close()
        }
    }

    /// Waits until the peripheral holds `value` in `characteristic` (writes without response
    /// have no completion of their own).
    func waitForValue(_ value: Data, in characteristic: BluetoothUUID) async throws {
        let driver = self.driver
        try await waitUntil("\(value.count) bytes in \(characteristic) on the peripheral") {
            try await driver.value(of: characteristic) == value
        }
    }

    /// The test peripheral's characteristic `uuid`.
    func characteristic(_ uuid: BluetoothUUID, of peripheral: Peripheral) async throws -> Characteristic {
        try await peripheral.characteristic(uuid, in: service)
    }
}
