import BLE
import BLESimulator
import DBus
import DBusTestSupport
import Foundation
import Testing

/// A private bus with a simulated bluetoothd, for one test.
struct SimulatorFixture: Sendable {
    let bus: TestBus
    let simulator: BLESimulator.Simulator
    /// The centrals the test made through the fixture, checked for leftovers at teardown.
    let ledger = CentralLedger()

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
        let fixture = SimulatorFixture(bus: bus, simulator: simulator)
        let result = try await body(fixture)
        await fixture.ledger.expectNothingOutstanding()
        return result
    }

    func central(options: CentralOptions = CentralOptions()) async throws -> Central {
        ledger.track(try await Central(bus: .address(bus.address), adapter: "hci0", options: options))
    }
}

/// Every central a test made, held weakly (tests check what releasing one does), with its
/// diagnostics held strongly so they can be read after it is gone.
final class CentralLedger: Sendable {
    private struct Entry {
        weak var central: Central?
        let diagnostics: BLEDiagnostics
    }

    private let entries = PosixMutex<[Entry]>([])

    @discardableResult
    func track(_ central: Central) -> Central {
        entries.withLock { $0.append(Entry(central: central, diagnostics: central.diagnostics)) }
        return central
    }

    /// The body is done: no task may still wait inside the SDK. Then closing each central
    /// must end every stream and bus call it had.
    func expectNothingOutstanding() async {
        let entries = self.entries.withLock { $0 }
        for entry in entries {
            await settle(entry.diagnostics, "after the test body") {
                $0.continuationsCreated == $0.continuationsResumed
            }
            await entry.central?.close()
            await settle(entry.diagnostics, "after close") { $0.outstanding == 0 }
        }
    }

}

/// Waits up to 5 s for `condition`; cleanup work runs on tasks and dispatch queues of its own
/// (a socket closes once its sources are cancelled), so it may lag behind the call that ended it.
func settle(_ diagnostics: BLEDiagnostics, _ when: String, _ condition: (BLEDiagnostics) -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition(diagnostics) {
        guard ContinuousClock.now < deadline else {
            Issue.record("outstanding in the SDK \(when): \(diagnostics.summary)")
            return
        }
        try? await Task.sleep(for: .milliseconds(5))
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
