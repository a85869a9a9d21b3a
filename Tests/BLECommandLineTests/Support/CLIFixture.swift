import BLE
import BLESimulator
import DBusTestSupport
import Foundation

/// A private bus with a simulated bluetoothd in the test process, for the `ble` binary to use
/// through `--bus`.
struct CLIFixture: Sendable {
    let bus: TestBus
    let simulator: Simulator

    static let monitor = "C4:7C:8D:6A:11:22"
    static let thermometer = "D0:5F:B8:00:00:01"

    /// A heart-rate monitor with a refused characteristic and a described one, and a weaker thermometer.
    static func peripherals() -> [VirtualPeripheral] {
        var monitor = VirtualPeripheral(
            address: monitor, name: "Test HRM",
            services: [
                VirtualService(
                    uuid: "180D",
                    characteristics: [
                        VirtualCharacteristic(uuid: "2A37", flags: ["notify"], value: [0x00, 0x48]),
                        VirtualCharacteristic(
                            uuid: "2A38", flags: ["read"], value: [0x01],
                            descriptors: [VirtualDescriptor(uuid: "2901", value: HexData(Data("where".utf8)))]),
                        VirtualCharacteristic(uuid: "2A39", flags: ["write"], value: [0x00]),
                    ]),
                VirtualService(
                    uuid: "180A",
                    characteristics: [
                        VirtualCharacteristic(uuid: "2A29", flags: ["read"], value: HexData(Data("swift-ble".utf8))),
                        VirtualCharacteristic(uuid: "2A25", flags: ["read"], value: [0x53]),
                    ]),
            ])
        monitor.serviceUUIDs = ["180D"]
        monitor.rssi = -50
        monitor.advertisingIntervalMs = 20
        monitor.manufacturerData = [0x006B: HexData(Data([0x02, 0xC2]))]
        monitor.services[0].characteristics[0].notifyIntervalMs = 40
        monitor.services[0].characteristics[0].notifyValues = [[0x00, 0x48], [0x00, 0x4A], [0x00, 0x4C]]
        monitor.services[1].characteristics[1].readError = 0x02
        var thermometer = VirtualPeripheral(
            address: thermometer, name: "Thermo",
            services: [
                VirtualService(
                    uuid: "1809", characteristics: [VirtualCharacteristic(uuid: "2A1D", flags: ["read"], value: [0x02])]
                )
            ])
        thermometer.serviceUUIDs = ["1809"]
        thermometer.rssi = -85
        thermometer.advertisingIntervalMs = 20
        return [monitor, thermometer]
    }

    /// Runs `body` with a fresh bus and simulator, stopped afterwards.
    static func run<R: Sendable>(
        peripherals: [VirtualPeripheral] = peripherals(), _ body: (CLIFixture) async throws -> R
    ) async throws -> R {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await Simulator.start(on: .address(bus.address), peripherals: peripherals)
        defer { simulator.stop() }
        return try await body(CLIFixture(bus: bus, simulator: simulator))
    }

    /// `--bus <address>`, for the tool's command line.
    var busArguments: [String] { ["--bus", bus.address] }

    /// Runs `ble command busArguments… arguments…` to the end.
    func ble(_ command: String, _ arguments: String..., environment: [String: String] = [:]) async throws
        -> ToolProcess.Outcome
    {
        try await ToolProcess.run([command] + busArguments + arguments, environment: environment)
    }

    /// Whether bluetoothd (the simulator) has a link to `address` now, as a fresh central sees it.
    func isConnected(_ address: String) async throws -> Bool {
        let central = try await Central(bus: .address(bus.address))
        defer { Task { await central.close() } }
        return await central.knownPeripherals().contains { $0.id.address == address && $0.isConnected }
    }
}
