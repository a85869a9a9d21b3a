import BLE
import BLESimulator
import DBusTestSupport
import Foundation

/// A private bus with a simulated bluetoothd, for one test.
struct SimulatorFixture: Sendable {
    let bus: TestBus
    let simulator: BLESimulator.Simulator

    static let heartRateAddress = "C4:7C:8D:6A:11:22"

    static func heartRateMonitor(address: String = heartRateAddress, name: String = "HRM") -> VirtualPeripheral {
        var peripheral = VirtualPeripheral(
            address: address, name: name,
            services: [
                VirtualService(
                    uuid: "180D",
                    characteristics: [
                        VirtualCharacteristic(uuid: "2A37", flags: ["notify"], value: [0x00, 0x48]),
                        VirtualCharacteristic(uuid: "2A38", flags: ["read"], value: [0x01]),
                        VirtualCharacteristic(uuid: "2A39", flags: ["write"], value: [0x00]),
                    ])
            ])
        peripheral.serviceUUIDs = ["180D"]
        peripheral.advertisingIntervalMs = 20
        return peripheral
    }

    /// Runs `body` with a fresh bus and simulator, stopping both afterwards.
    static func run<R: Sendable>(
        profile: BlueZProfile = .v5_66, options: SimulatorOptions = SimulatorOptions(),
        peripherals: [VirtualPeripheral] = [heartRateMonitor()],
        _ body: (SimulatorFixture) async throws -> R
    ) async throws -> R {
        let bus = try TestBus()
        defer { bus.stop() }
        let simulator = try await Simulator.start(
            on: .address(bus.address), profile: profile, options: options, peripherals: peripherals)
        defer { simulator.stop() }
        return try await body(SimulatorFixture(bus: bus, simulator: simulator))
    }

    func central(options: CentralOptions = CentralOptions()) async throws -> Central {
        try await Central(bus: .address(bus.address), adapter: "hci0", options: options)
    }
}

/// Waits for the first element of `sequence` that satisfies `predicate`, or fails after `timeout`.
func first<S: AsyncSequence & Sendable>(
    _ sequence: S, within timeout: Duration = .seconds(10), where predicate: @escaping @Sendable (S.Element) -> Bool
) async throws -> S.Element? where S.Element: Sendable {
    try await withThrowingTaskGroup(of: S.Element?.self) { group in
        group.addTask {
            for try await element in sequence where predicate(element) { return element }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let result = try await group.next() ?? nil
        group.cancelAll()
        return result
    }
}
