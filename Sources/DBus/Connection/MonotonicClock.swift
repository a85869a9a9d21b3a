import Glibc

/// Nanoseconds on CLOCK_MONOTONIC: cheap to read on the I/O thread's hot path.
enum MonotonicClock {
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// The deadline `duration` from now, saturating instead of overflowing.
    static func deadline(after duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        // A negative duration is a deadline already passed; below one second it has zero
        // seconds and negative attoseconds, which must not reach the UInt64 conversion.
        if seconds < 0 || attoseconds < 0 { return now() }
        let nanos = UInt64(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if nanos.overflow { return .max }
        let total = nanos.partialValue.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        if total.overflow { return .max }
        let sum = now().addingReportingOverflow(total.partialValue)
        return sum.overflow ? .max : sum.partialValue
    }

    /// Milliseconds left until `deadline`, clamped into libdbus's `int` timeout range (≥ 1).
    static func millisecondsUntil(_ deadline: UInt64) -> Int32 {
        let current = now()
        guard deadline > current else { return 0 }
        let millis = (deadline - current + 999_999) / 1_000_000
        return Int32(clamping: min(millis, UInt64(Int32.max - 1)))
    }
}
