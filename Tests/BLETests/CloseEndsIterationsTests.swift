import Foundation
import Testing

@testable import BLE

/// Closing a central ends what its peripherals hand out: an iteration of notifications running
/// in a task of the app's ends, instead of waiting for values that can no longer come.
@Suite("Closing a central", .timeLimit(.minutes(1)))
struct CloseEndsIterationsTests {
    @Test("an iteration of notifications ends when the central closes, its subscription gone")
    func notificationsEnd() async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            let (central, peripheral) = try await fixture.connected(NotificationTests.sensor)
            let rate = try await NotificationTests.rate(peripheral)
            let values = try await rate.subscribe()
            let iteration = Task {
                var count = 0
                for await _ in values { count += 1 }
                return count
            }
            try NotificationTests.notify(fixture, Data([1]))
            try await eventually("the first value arrived") { rate.lastValue == Data([1]) }
            await central.close()
            // Ends at once: a value can no longer come over a closed bus connection.
            #expect(await iteration.value >= 0)
            #expect(await !rate.isNotifying)
        }
    }
}
