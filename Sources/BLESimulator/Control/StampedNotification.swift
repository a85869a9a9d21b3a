import Foundation
import Glibc

/// The payload of the notifications ``Simulator/startNotifications(address:characteristic:count:interval:payload:)``
/// sends, made for latency and loss measurements.
///
/// Layout, little-endian: bytes 0..<8 hold `CLOCK_MONOTONIC` nanoseconds taken just before the
/// value went to the bus, bytes 8..<12 a sequence number counting from zero, and the rest is
/// zero padding up to the requested size. A receiver on the same machine subtracts the stamp
/// from its own ``monotonicNow()`` for the latency, and looks for gaps in the sequence for loss.
public struct StampedNotification: Sendable, Hashable {
    /// Bytes taken by the stamp and the sequence number: the smallest payload.
    public static let headerSize = 12

    /// `CLOCK_MONOTONIC` nanoseconds when the notification was sent.
    public var timestamp: UInt64
    /// Its position in the run, from zero.
    public var sequence: UInt32

    /// A stamp.
    public init(timestamp: UInt64, sequence: UInt32) {
        self.timestamp = timestamp
        self.sequence = sequence
    }

    /// Reads the stamp at the start of a received value; nil when it is shorter than
    /// ``headerSize``.
    public init?(_ value: Data) {
        guard value.count >= Self.headerSize else { return nil }
        let bytes = [UInt8](value.prefix(Self.headerSize))
        var timestamp: UInt64 = 0
        for index in (0..<8).reversed() { timestamp = timestamp << 8 | UInt64(bytes[index]) }
        var sequence: UInt32 = 0
        for index in (8..<12).reversed() { sequence = sequence << 8 | UInt32(bytes[index]) }
        self.timestamp = timestamp
        self.sequence = sequence
    }

    /// The value to send: the stamp, then zeros up to `size` bytes (never fewer than
    /// ``headerSize``).
    public func encoded(size: Int) -> Data {
        var bytes = [UInt8](repeating: 0, count: max(size, Self.headerSize))
        for index in 0..<8 { bytes[index] = UInt8(truncatingIfNeeded: timestamp >> (8 * UInt64(index))) }
        for index in 0..<4 { bytes[8 + index] = UInt8(truncatingIfNeeded: sequence >> (8 * UInt32(index))) }
        return Data(bytes)
    }

    /// `CLOCK_MONOTONIC` now, in nanoseconds: the clock the stamps use, for receivers that
    /// compute latencies.
    public static func monotonicNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }
}
