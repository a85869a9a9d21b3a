import Foundation

/// One measured phase of a GATT benchmark: wall and CPU time (getrusage) from its start, and
/// the latencies recorded in it, printed as the JSON line `Benchmarks/run_gatt.py` reads. The keys
/// are those of the C floor (`Benchmarks/floor/gatt_floor.c`).
struct GattPhase {
    var wallStart = Meter.monotonicNanoseconds()
    var cpuStart = Meter.cpuNanoseconds()
    var switchesStart = Meter.contextSwitches()
    var wallEnd: UInt64 = 0
    var cpuEnd: UInt64 = 0
    var switchesEnd = (all: 0, voluntary: 0)
    var latencies: [UInt64] = []

    init(capacity: Int) { latencies.reserveCapacity(capacity) }

    mutating func stop() {
        wallEnd = Meter.monotonicNanoseconds()
        cpuEnd = Meter.cpuNanoseconds()
        switchesEnd = Meter.contextSwitches()
    }

    /// The JSON line: `ops` is what rates and CPU are per; `wall` defaults to the phase's.
    func json(
        case name: String, ops: Int, wall: Double? = nil, extra: [(String, String)] = [], impl: String = "swift-ble"
    ) -> String {
        let seconds = wall ?? Double(wallEnd - wallStart) / 1e9
        let sorted = latencies.sorted()
        func microseconds(_ rank: Int) -> Double { sorted.isEmpty ? 0 : Double(sorted[rank]) / 1e3 }
        let p99Rank = max(1, Int((0.99 * Double(sorted.count)).rounded(.up))) - 1
        let fields: [(String, String)] = [
            ("impl", "\"\(impl)\""), ("case", "\"\(name)\""), ("n", "\(ops)"), ("wall_s", format(seconds)),
            ("ops_per_s", format(seconds > 0 ? Double(ops) / seconds : 0)),
            ("cpu_us_per_op", format(ops > 0 ? Double(cpuEnd - cpuStart) / 1e3 / Double(ops) : 0)),
            ("cs_per_op", format(ops > 0 ? Double(switchesEnd.all - switchesStart.all) / Double(ops) : 0)),
            ("vcs_per_op", format(ops > 0 ? Double(switchesEnd.voluntary - switchesStart.voluntary) / Double(ops) : 0)),
            ("lat_min_us", format(microseconds(0))),
            ("lat_p50_us", format(microseconds(max(0, (sorted.count - 1) / 2)))),
            ("lat_p99_us", format(microseconds(max(0, min(p99Rank, sorted.count - 1))))),
            ("lat_max_us", format(microseconds(max(0, sorted.count - 1)))),
            ("rss_kb", "\(MemoryMeter.residentKilobytes())"), ("peak_rss_kb", "\(MemoryMeter.peakKilobytes())"),
        ]
        return "{" + (fields + extra).map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    private func format(_ value: Double) -> String { String(format: "%.3f", value) }
}

/// The process's memory: resident now (/proc/self/statm) and at its peak (/proc/self/status).
enum MemoryMeter {
    static func residentKilobytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    /// VmHWM, not `ru_maxrss`: the latter survives exec, so it would include the parent's RSS at fork.
    static func peakKilobytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }
}
