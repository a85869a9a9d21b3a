import Testing

@testable import DBus

/// `MonotonicClock.deadline(after:)`: a duration's whole nanoseconds after now, on both sides
/// of the 64-bit shortcut (about 2.6 hours), saturating past what `UInt64` nanoseconds hold.
@Suite struct MonotonicClockTests {
    @Test(
        "a deadline is the duration's whole nanoseconds from now",
        arguments: [
            (Duration.nanoseconds(1), UInt64(1)),
            (Duration(secondsComponent: 0, attosecondsComponent: 999_999_999), UInt64(0)),
            (Duration(secondsComponent: 7, attosecondsComponent: 123_456_789_999_999_999), UInt64(7_123_456_789)),
            (Duration.seconds(30), UInt64(30_000_000_000)),
            (Duration.seconds(9_382), UInt64(9_382_000_000_000)),
            (Duration.seconds(86_400 * 365), UInt64(31_536_000_000_000_000)),
        ])
    func wholeNanoseconds(_ duration: Duration, _ nanoseconds: UInt64) {
        let before = MonotonicClock.now()
        let deadline = MonotonicClock.deadline(after: duration)
        let after = MonotonicClock.now()
        #expect(deadline >= before + nanoseconds)
        #expect(deadline <= after + nanoseconds)
    }

    @Test("a duration beyond 584 years of nanoseconds saturates")
    func saturates() {
        #expect(MonotonicClock.deadline(after: .seconds(Int64.max)) == .max)
        #expect(MonotonicClock.deadline(after: .seconds(UInt64.max / 1_000_000_000 + 1)) == .max)
    }
}
