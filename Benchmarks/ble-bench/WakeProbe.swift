import Foundation

/// The readers of `Benchmarks/floor/wake_probe.c` when `run_gatt.py` preloaded it: the calling
/// thread's last return from an I/O wait that found something ready (ns, CLOCK_MONOTONIC) and
/// how many such returns it had. Read on the connection's I/O thread (the thread that waits for
/// bluetoothd's answers, where the measured loop runs): what an operation spends after its last
/// wake-up is this process's own work on the way out.
struct WakeProbe: Sendable {
    private typealias Reader = @convention(c) () -> UInt64
    private let lastWake: Reader
    private let wakeUps: Reader

    /// The probe, when preloaded and the measured loop runs on the I/O thread.
    static func loaded(runsOnIOThread: Bool) -> WakeProbe? {
        guard runsOnIOThread, let last = dlsym(nil, "wake_probe_last_ns"), let count = dlsym(nil, "wake_probe_count")
        else { return nil }
        return WakeProbe(lastWake: unsafeBitCast(last, to: Reader.self), wakeUps: unsafeBitCast(count, to: Reader.self))
    }

    /// This thread's wake-ups so far.
    var count: UInt64 { wakeUps() }

    /// The time from this thread's last wake-up (or `start`, if later) to `end`.
    func afterLastWake(start: UInt64, end: UInt64) -> UInt64 { end - max(lastWake(), start) }
}

/// Per operation: the time after its last wake-up and its wake-ups, reported as medians.
struct WakeRecord {
    var afterWake: [UInt64] = []
    var wakeUps: [UInt64] = []

    /// The JSON fields (`after_wake_p50_us`, `wake_ups_p50`); none without records.
    var fields: [(String, String)] {
        guard !afterWake.isEmpty else { return [] }
        func median(_ values: [UInt64]) -> UInt64 { values.sorted()[(values.count - 1) / 2] }
        return [
            ("after_wake_p50_us", String(format: "%.3f", Double(median(afterWake)) / 1e3)),
            ("wake_ups_p50", "\(median(wakeUps))"),
        ]
    }
}
