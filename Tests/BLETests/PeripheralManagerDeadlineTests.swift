import BLE
import BLESimulator
import Foundation
import Testing

/// The deadlines of adding and removing services (issue 22): counted from the call, a late
/// RegisterApplication ends in `timeout`, the service is taken back and the manager goes on.
@Suite("Peripheral manager deadlines", .timeLimit(.minutes(1)))
struct PeripheralManagerDeadlineTests {
    @Test("add(_:timeout:) past its deadline throws timeout and takes the service back; earlier ones stay")
    func addTimesOut() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            try await manager.add(TestServices.battery)
            fixture.simulator.inject(SimulatedFault(.registerApplication, action: .delay(.seconds(3))))
            let error = await #expect(throws: BLEError.self) {
                try await manager.add(TestServices.heartRate, timeout: .milliseconds(300))
            }
            #expect(error?.code == .timeout)
            #expect(await manager.publishedServices.map(\.uuid) == ["180F"])
            try await eventually("only the battery service is registered again") {
                fixture.simulator.registeredApplications.first?.services.map(\.uuid)
                    == [BluetoothUUID("180F").uuidString]
            }
            // The manager goes on: within the default deadline (no wall-clock bound of the
            // test's own on a loaded machine).
            try await manager.add(TestServices.secured)
            #expect(fixture.simulator.registeredApplications.first?.services.count == 2)
        }
    }

    @Test("the deadline counts from the call, also while it waits for another addition")
    func deadlinePassedInQueue() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            fixture.simulator.inject(SimulatedFault(.registerApplication, action: .delay(.milliseconds(400))))
            async let first = manager.add(TestServices.battery)
            // The first addition is registered and waits for its delayed answer, holding the
            // manager's turn; the second queues behind it, and its 100 ms are gone when its
            // turn comes (the 400 ms delay is the subject here: a deadline the SDK promises).
            try await eventually("the first addition waits for its answer") {
                fixture.simulator.registeredApplications.count == 1
            }
            let error = await #expect(throws: BLEError.self) {
                try await manager.add(TestServices.heartRate, timeout: .milliseconds(100))
            }
            #expect(error?.code == .timeout)
            _ = try await first
            #expect(await manager.publishedServices.map(\.uuid) == ["180F"])
            try await manager.removeAllServices()
            #expect(await manager.publishedServices.isEmpty)
        }
    }
}
