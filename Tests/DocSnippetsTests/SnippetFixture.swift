import BLE
import BLESimulator
import DBusTestSupport
import Foundation

/// A private bus with a simulated heart-rate monitor, for running the articles' code.
struct SnippetFixture: Sendable {
    let bus: TestBus
    let simulator: BLESimulator.Simulator

    static let address = "C4:7C:8D:6A:11:22"

    static func heartRateMonitor() -> VirtualPeripheral {
        var peripheral = VirtualPeripheral(
            address: address, name: "HRM",
            services: [
                VirtualService(
                    uuid: "180D",
                    characteristics: [
                        VirtualCharacteristic(uuid: "2A37", flags: ["notify"], value: [0x00, 0x48]),
                        VirtualCharacteristic(uuid: "2A38", flags: ["read"], value: [0x02]),
                        VirtualCharacteristic(uuid: "2A39", flags: ["write", "write-without-response"], value: [0x00]),
                    ])
            ])
        peripheral.serviceUUIDs = ["180D"]
        peripheral.advertisingIntervalMs = 20
        return peripheral
    }

    static func run<R: Sendable>(
        options: SimulatorOptions = SimulatorOptions(), monitor: VirtualPeripheral = heartRateMonitor(),
        _ body: (SnippetFixture) async throws -> R
    ) async throws -> R {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await Simulator.start(on: .address(bus.address), options: options, peripherals: [monitor])
        defer { simulator.stop() }
        return try await body(SnippetFixture(bus: bus, simulator: simulator))
    }

    var blePath: Bus { .address(bus.address) }

    var id: PeripheralID { get throws { try PeripheralID(address: Self.address) } }

    /// A connected heart-rate monitor and its central, closed after `body`.
    func connected<R: Sendable>(_ body: (Peripheral) async throws -> R) async throws -> R {
        let central = try await Central(bus: blePath)
        let peripheral = try await central.connect(try id, timeout: .seconds(10))
        do {
            let result = try await body(peripheral)
            try? await peripheral.disconnect()
            await central.close()
            return result
        } catch {
            try? await peripheral.disconnect()
            await central.close()
            throw error
        }
    }

    /// Notifies heart-rate values every `interval` until cancelled: the subscriber may join late.
    func heartbeats(every interval: Duration) -> Task<Void, any Error> {
        let simulator = self.simulator
        return Task {
            for beat in 0..<10_000 {
                try await Task.sleep(for: interval)
                _ = try? simulator.notify(
                    address: Self.address, characteristic: "2A37", value: Data([0, UInt8(beat & 0xFF)]))
            }
        }
    }
}
