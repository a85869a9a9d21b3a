import Foundation

/// The size of a fault soak. The defaults are the short run inside `make test`; `make soak`
/// sets `SOAK_PERIPHERALS`, `SOAK_OPERATIONS`, `SOAK_WORKERS` (and `SOAK_SEED` to replay a run);
/// `SWIFT_BLE_SANITIZER` (set by `make sanitize`) stretches the deadlines.
struct SoakPlan: Sendable, CustomStringConvertible {
    var peripherals = 12
    var operations = 1000
    var workers = 6
    var seed: UInt64 = UInt64.random(in: 1...UInt64.max)
    var restarts = 2
    /// The SDK's deadline for one GATT call; connects get twice as long.
    var callTimeout: Duration = .seconds(1)
    /// What an operation may take beyond its deadline, besides the scheduling lag the soak
    /// measures while it runs (``SchedulingLag``): one background StopNotify queued ahead of it
    /// (an unsubscribe's cleanup, up to a call's deadline), and some slack. A fixed 5 s used to
    /// stand for the load too, and a loaded machine could still exceed it. A hang still fails:
    /// it never ends.
    var margin: Duration = .seconds(3)

    var connectTimeout: Duration { callTimeout * 2 }

    static func fromEnvironment() -> SoakPlan {
        let environment = ProcessInfo.processInfo.environment
        var plan = SoakPlan()
        if let value = environment["SOAK_PERIPHERALS"].flatMap(Int.init) { plan.peripherals = value }
        if let value = environment["SOAK_OPERATIONS"].flatMap(Int.init) { plan.operations = value }
        if let value = environment["SOAK_WORKERS"].flatMap(Int.init) { plan.workers = value }
        if let value = environment["SOAK_SEED"].flatMap({ UInt64($0) }) { plan.seed = value }
        if let sanitizer = environment["SWIFT_BLE_SANITIZER"], !sanitizer.isEmpty {
            // `make sanitize` sets it: instrumented code runs several times slower, so calls
            // need longer deadlines and operations a wider margin past them.
            plan.callTimeout *= 3
            plan.margin *= 4
        }
        plan.workers = max(1, min(plan.workers, plan.peripherals))
        return plan
    }

    var description: String {
        "seed \(seed) (SOAK_SEED=\(seed) replays it), \(peripherals) peripherals, \(operations) operations, "
            + "\(workers) workers, \(restarts) bluetoothd restarts"
    }
}

/// SplitMix64: small, fast, and the same sequence for the same seed on every machine.
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The process's resident set size in kB, from /proc/self/status.
func residentKilobytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }
    return 0
}
