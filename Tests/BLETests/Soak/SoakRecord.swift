import DBus
import Foundation
import Synchronization

/// What happened during a soak: per kind of operation how many were attempted, succeeded and
/// failed (by code), how many values were checked against the simulator, and the same for the
/// operations no fault touched; what was found wrong; overruns; chaos.
final class SoakRecord: Sendable {
    struct Tally: Sendable {
        var attempted = 0
        var succeeded = 0
        var failed: [String: Int] = [:]
        var checked = 0
        var untouchedAttempted = 0
        var untouchedSucceeded = 0
        /// Of those, the quiet round's (after the chaos; not in the other counts).
        var quietAttempted = 0
        var quietSucceeded = 0
    }

    private struct State {
        var tallies: [String: Tally] = [:]
        var untouchedFailures: [String] = []
        var violations: [String] = []
        var overruns: [String] = []
        var chaos: [String: Int] = [:]
    }

    private let state = PosixMutex(State())

    /// An operation of `kind` ended with `result` ("ok", "ok, …" or an error code); `untouched`
    /// when no fault could have reached it; `quiet` when it ran in the quiet round (counted apart,
    /// and untouched).
    func outcome(
        _ kind: String, _ result: String, untouched: Bool = false, quiet: Bool = false, on peripheral: Int? = nil
    ) {
        let ok = result.hasPrefix("ok")
        state.withLock { state in
            var tally = state.tallies[kind, default: Tally()]
            if quiet {
                tally.quietAttempted += 1
                if ok { tally.quietSucceeded += 1 }
            } else {
                tally.attempted += 1
                if ok { tally.succeeded += 1 }
                if result != "ok" { tally.failed[result, default: 0] += 1 }
                if untouched { tally.untouchedAttempted += 1 }
                if untouched && ok { tally.untouchedSucceeded += 1 }
            }
            if (untouched || quiet) && !ok {
                state.untouchedFailures.append(
                    "\(quiet ? "quiet " : "")\(kind) on \(peripheral.map(String.init) ?? "?"): \(result)")
            }
            state.tallies[kind] = tally
        }
    }

    /// A value of `kind` was checked against what the simulator holds (and found right).
    func checked(_ kind: String) { state.withLock { $0.tallies[kind, default: Tally()].checked += 1 } }

    /// Something the simulator and the SDK disagree on.
    func violation(_ what: String) { state.withLock { $0.violations.append(what) } }

    func overrun(_ what: String) { state.withLock { $0.overruns.append(what) } }

    func chaos(_ kind: String) { state.withLock { $0.chaos[kind, default: 0] += 1 } }

    var overruns: [String] { state.withLock { $0.overruns } }
    var violations: [String] { state.withLock { $0.violations } }
    /// Operations no fault touched that failed anyway.
    var untouchedFailures: [String] { state.withLock { $0.untouchedFailures } }

    func tally(_ kind: String) -> Tally { state.withLock { $0.tallies[kind] ?? Tally() } }

    /// Operations of `kinds`, and how many of them succeeded.
    func share(of kinds: [String]) -> (succeeded: Int, attempted: Int) {
        state.withLock { state in
            kinds.reduce((0, 0)) {
                ($0.0 + (state.tallies[$1]?.succeeded ?? 0), $0.1 + (state.tallies[$1]?.attempted ?? 0))
            }
        }
    }

    /// How often a chaos action happened.
    func chaosCount(_ kind: String) -> Int { state.withLock { $0.chaos[kind] ?? 0 } }

    var report: String {
        state.withLock { state in
            let kinds = state.tallies.keys.sorted().map { kind in
                let tally = state.tallies[kind] ?? Tally()
                let failed = tally.failed.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                return "  \(kind): \(tally.attempted) attempted, \(tally.succeeded) succeeded, "
                    + "other outcomes: [\(failed.joined(separator: ", "))]; "
                    + "untouched by faults \(tally.untouchedSucceeded)/\(tally.untouchedAttempted) succeeded; "
                    + "quiet round \(tally.quietSucceeded)/\(tally.quietAttempted) succeeded; "
                    + "\(tally.checked) values checked (quiet round included)"
            }
            let chaos = state.chaos.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            return (["operations:"] + kinds + ["chaos: " + chaos.joined(separator: ", ")]).joined(separator: "\n")
        }
    }
}

/// How far the workers got, shared by the soak's tasks.
final class SoakProgress: Sendable {
    /// Operations handed out (may overshoot by one per worker at the end).
    let next = Atomic<Int>(0)
    /// Operations finished (``operationFinished()`` counts them).
    let done = Atomic<Int>(0)
    /// Set once every operation finished (``finish()``): chaos and the indicator stop.
    let finished = Atomic<Bool>(false)
    /// Who waits for a number of finished operations (``waitUntilDone(_:)``).
    private let waiters = PosixMutex<[(target: Int, waiter: CheckedContinuation<Void, Never>)]>([])

    /// A worker finished an operation: the waiters it brings to their count go on.
    func operationFinished() {
        let done = self.done.add(1, ordering: .relaxed).newValue
        resume { $0.target <= done }
    }

    /// Every operation finished: every waiter goes on.
    func finish() {
        finished.store(true, ordering: .relaxed)
        resume { _ in true }
    }

    /// Returns once `target` operations have finished, or the run has.
    func waitUntilDone(_ target: Int) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            // Read under the lock that the counters' resumptions take: a count reached before
            // this is seen here, one reached after it finds this waiter.
            let now = waiters.withLock { waiters -> Bool in
                if finished.load(ordering: .relaxed) || done.load(ordering: .relaxed) >= target { return true }
                waiters.append((target, waiter))
                return false
            }
            if now { waiter.resume() }
        }
    }

    private func resume(where due: (_ entry: (target: Int, waiter: CheckedContinuation<Void, Never>)) -> Bool) {
        let ready = waiters.withLock { waiters in
            let ready = waiters.filter(due)
            waiters.removeAll(where: due)
            return ready
        }
        for entry in ready { entry.waiter.resume() }
    }
}
