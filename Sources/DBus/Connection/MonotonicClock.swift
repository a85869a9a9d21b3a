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
        let attoseconds = duration.attoseconds
        // A negative duration is a deadline already passed.
        guard attoseconds > 0 else { return now() }
        // Nanoseconds by a 64-bit division below about 2.6 hours (10^9 = 2^9 · 1,953,125, and
        // flooring twice floors once): `components` divides 128-bit integers, a few hundred
        // instructions on every call made.
        let shifted = attoseconds >> 9
        let nanoseconds: UInt64
        if shifted <= Int128(UInt64.max) {
            nanoseconds = UInt64(shifted) / 1_953_125
        } else {
            let whole = attoseconds / 1_000_000_000
            guard whole <= Int128(UInt64.max) else { return .max }
            nanoseconds = UInt64(whole)
        }
        let sum = now().addingReportingOverflow(nanoseconds)
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
