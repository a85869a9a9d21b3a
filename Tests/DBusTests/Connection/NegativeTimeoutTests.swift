import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// A deadline already in the past (a caller subtracting elapsed time from its budget can get
/// one) is a timeout, never a crash: the fault soak crashed on `-0.4 s` before this was fixed.
@Suite struct NegativeTimeoutTests {
    @Test("a call with a past deadline times out at once", arguments: [-0.4, -1.0, -3600.0, 0.0])
    func pastDeadline(seconds: Double) async throws {
        try await withServiceAndClient { _, connection, client in
            let service = try SlowService(connection)
            defer { service.gate.open() }
            let error = await expectDBusError { try await service.callSlow(from: client, timeout: .seconds(seconds)) }
            #expect(error?.code == .timeout)
            #expect(client.counters.outstanding == 0)
            #expect(try await service.echo(7, from: client) == 7)
        }
    }

    @Test func deadlinesOfPastDurationsAreNow() {
        let before = MonotonicClock.now()
        for duration in [Duration.milliseconds(-400), .nanoseconds(-1), .seconds(-2), .zero] {
            let deadline = MonotonicClock.deadline(after: duration)
            #expect(deadline >= before && deadline <= MonotonicClock.now())
        }
    }
}
