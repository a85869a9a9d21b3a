import BLESimulator
import Foundation
import Testing

/// The layout of stamped notification payloads.
@Suite struct StampedNotificationTests {
    @Test func layoutIsLittleEndianStampThenSequenceThenZeros() {
        let value = StampedNotification(timestamp: 0x0102_0304_0506_0708, sequence: 0x0A0B_0C0D).encoded(size: 16)
        #expect(Array(value) == [8, 7, 6, 5, 4, 3, 2, 1, 0x0D, 0x0C, 0x0B, 0x0A, 0, 0, 0, 0])
    }

    @Test func decodingReadsTheHeaderAndIgnoresPadding() {
        let stamp = StampedNotification(timestamp: 123_456_789_012, sequence: 42)
        #expect(StampedNotification(stamp.encoded(size: 244)) == stamp)
        #expect(StampedNotification(Data(stamp.encoded(size: 20).dropFirst(0))) == stamp)
    }

    @Test func shortValuesAreNotStamps() {
        #expect(StampedNotification(Data(count: 11)) == nil)
    }

    @Test func payloadNeverDropsBelowTheHeader() {
        #expect(StampedNotification(timestamp: 1, sequence: 1).encoded(size: 3).count == StampedNotification.headerSize)
    }

    @Test func monotonicClockAdvances() {
        let first = StampedNotification.monotonicNow()
        #expect(StampedNotification.monotonicNow() >= first)
        #expect(first > 0)
    }
}
