import Testing

@testable import BLE

/// The GATT client's wake-up timer as transcripts: actions applied in any order leave the
/// newest one's timer current and cancel every other.
@Suite struct WakeTimerSlotTests {
    @Test("a newer wake-up replaces the timer before it, which is cancelled; a withdrawal cancels the current one")
    func inOrder() {
        var slot = WakeTimerSlot()
        #expect(slot.apply(generation: 1, timer: 10) == nil)
        #expect(slot.apply(generation: 2, timer: 20) == 10)
        #expect(slot.apply(generation: 3, timer: nil) == 20)
        #expect(slot.apply(generation: 4, timer: 40) == nil)
    }

    @Test("a withdrawal that arrives after a newer wake-up leaves that wake-up's timer alone")
    func staleWithdrawal() {
        var slot = WakeTimerSlot()
        _ = slot.apply(generation: 1, timer: 10)
        #expect(slot.apply(generation: 3, timer: 30) == 10, "the newer wake-up ran first")
        #expect(slot.apply(generation: 2, timer: nil) == nil, "the older withdrawal changes nothing")
        #expect(slot.apply(generation: 4, timer: nil) == 30, "the timer of generation 3 was still current")
    }

    @Test("a wake-up that arrives after a newer action has its own timer cancelled")
    func staleWakeUp() {
        var slot = WakeTimerSlot()
        #expect(slot.apply(generation: 2, timer: nil) == nil)
        #expect(slot.apply(generation: 1, timer: 10) == 10, "set for an older wake-up: not needed")
        #expect(slot.apply(generation: 3, timer: 30) == nil, "nothing current to cancel")
    }
}
