import Foundation

/// Wall time and this process's CPU time (getrusage, user + system) over a measured phase.
struct Meter {
    let wallStart = Meter.monotonicNanoseconds()
    let cpuStart = Meter.cpuNanoseconds()

    static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Context switches of this process so far: all of them (voluntary and involuntary, the
    /// count perf's `context-switches` event reads) and the voluntary ones alone (a thread
    /// blocked: waiting for the bus, or handing work to another thread). The involuntary rest
    /// are preemptions, which the machine's load moves, not the client's design.
    static func contextSwitches() -> (all: Int, voluntary: Int) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return (usage.ru_nvcsw + usage.ru_nivcsw, usage.ru_nvcsw)
    }

    static func cpuNanoseconds() -> UInt64 {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func nanos(_ t: timeval) -> UInt64 { UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_usec) * 1_000 }
        return nanos(usage.ru_utime) + nanos(usage.ru_stime)
    }

    func report(mode: String, size: Int, count: Int, window: Int, latencies: [UInt64]) -> CallReport {
        let wall = Double(Meter.monotonicNanoseconds() - wallStart) / 1e9
        let cpu = Double(Meter.cpuNanoseconds() - cpuStart) / 1e3
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let rank = min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))
            return Double(sorted[rank]) / 1e3
        }
        return CallReport(
            mode: mode, size: size, count: count, window: window, wallSeconds: wall,
            callsPerSecond: Double(count) / max(wall, 1e-9), p50: percentile(0.5), p90: percentile(0.9),
            p99: percentile(0.99), max: Double(sorted.last ?? 0) / 1e3, cpuPerCall: cpu / Double(max(count, 1)))
    }
}

/// One benchmark run, printed as the JSON line the runner expects.
struct CallReport {
    var mode: String
    var size: Int
    var count: Int
    var window: Int
    var wallSeconds: Double
    var callsPerSecond: Double
    var p50: Double
    var p90: Double
    var p99: Double
    var max: Double
    var cpuPerCall: Double

    var json: String {
        func f(_ x: Double) -> String { String(format: "%.3f", x) }
        return """
            {"impl":"swift-ble","mode":"\(mode)","size":\(size),"n":\(count),"window":\(window),\
            "wall_s":\(f(wallSeconds)),"calls_per_s":\(f(callsPerSecond)),"p50_us":\(f(p50)),\
            "p90_us":\(f(p90)),"p99_us":\(f(p99)),"max_us":\(f(max)),"cpu_us_per_call":\(f(cpuPerCall))}
            """
    }
}
