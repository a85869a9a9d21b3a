import Testing

@testable import BLE

/// ``MachineInstant``: the state machines' time, a `ContinuousClock` instant kept as a
/// `Duration` since a fixed origin.
@Suite struct MachineInstantTests {
    @Test("an instant converts to ContinuousClock and back unchanged, before and after the origin")
    func roundTrip() {
        let now = ContinuousClock.now
        for offset: Duration in [.zero, .nanoseconds(1), .seconds(-3600), .seconds(86_400), .milliseconds(-7)] {
            #expect(MachineInstant(now + offset).continuous == now + offset)
        }
    }

    @Test("arithmetic and order are ContinuousClock's")
    func arithmetic() {
        let start = ContinuousClock.now
        let instant = MachineInstant(start)
        #expect((instant + .milliseconds(250)).continuous == start + .milliseconds(250))
        #expect((instant - .seconds(2)).continuous == start - .seconds(2))
        #expect((instant + .seconds(5)) - instant == .seconds(5))
        #expect(instant < instant + .nanoseconds(1))
        #expect(!(instant < instant))
        #expect(instant + .seconds(1) - .seconds(1) == instant)
        #expect(Set([instant, MachineInstant(start), instant + .zero]).count == 1)
    }

    @Test("now follows ContinuousClock.now")
    func followsTheClock() {
        let before = ContinuousClock.now
        let now = MachineInstant.now
        let after = ContinuousClock.now
        #expect(MachineInstant(before) <= now && now <= MachineInstant(after))
    }
}
