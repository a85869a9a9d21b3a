import DBus
import Foundation

/// A lock that suspends instead of blocking.
final class AsyncLock: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = PosixMutex(State())

    func lock() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state in
                if state.held {
                    state.waiters.append(waiter)
                    return false
                }
                state.held = true
                return true
            }
            if acquired { waiter.resume() }
        }
    }

    func unlock() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}

/// How late a plain timer wakes up while the soak runs: the pacer sleeps for ``interval`` again
/// and again and records by how much each sleep overran. That is what the machine's load (the
/// rest of the suite, other processes) adds to every wake-up of every task.
final class SchedulingLag: Sendable {
    static let interval: Duration = .milliseconds(10)

    private struct State {
        var samples: [Duration] = []
        var sleepingSince: ContinuousClock.Instant?
    }

    private let state = PosixMutex(State())

    /// Where the samples to come start.
    var mark: Int { state.withLock { $0.samples.count } }

    /// The worst lag since `mark`, counting the pacer's sleep under way if it overran already.
    func worst(since mark: Int) -> Duration {
        let now = ContinuousClock.now
        return state.withLock { state in
            var worst = state.samples[min(mark, state.samples.count)...].max() ?? .zero
            if let since = state.sleepingSince { worst = max(worst, now - since - Self.interval) }
            return worst
        }
    }

    /// Sleeps and records, until `finished`.
    func pace(until finished: @Sendable () -> Bool) async {
        while !finished() {
            let start = ContinuousClock.now
            state.withLock { $0.sleepingSince = start }
            try? await Task.sleep(for: Self.interval)
            let lag = ContinuousClock.now - start - Self.interval
            state.withLock { state in
                state.sleepingSince = nil
                state.samples.append(max(lag, .zero))
            }
        }
    }
}
