import Testing

@testable import BLE

/// `Duration.half`, the connect attempt's stall point.
@Suite struct DurationHalfTests {
    @Test func halvesToTheAttosecond() {
        #expect(Duration.seconds(3).half == .milliseconds(1500))
        #expect(Duration.seconds(30).half == .seconds(15))
        #expect(Duration.nanoseconds(1).half == Duration(attoseconds: 500_000_000))
        #expect(Duration(attoseconds: 3).half == Duration(attoseconds: 1))
        #expect(Duration.zero.half == .zero)
        #expect(Duration.seconds(-3).half == .milliseconds(-1500))
    }
}
