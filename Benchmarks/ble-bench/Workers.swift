/// `window` workers each run `operation` one at a time until `count` runs are done, and the
/// latency of every run in nanoseconds. The workers are child tasks, so they keep the caller's
/// task executor preference.
func measureInWorkers(count: Int, window: Int, _ operation: @escaping @Sendable () async throws -> Void)
    async throws -> [UInt64]
{
    try await withThrowingTaskGroup(of: [UInt64].self) { group in
        for worker in 0..<window {
            let share = count / window + (worker < count % window ? 1 : 0)
            group.addTask {
                var latencies: [UInt64] = []
                latencies.reserveCapacity(share)
                for _ in 0..<share {
                    let start = Meter.monotonicNanoseconds()
                    try await operation()
                    latencies.append(Meter.monotonicNanoseconds() - start)
                }
                return latencies
            }
        }
        var all: [UInt64] = []
        for try await part in group { all += part }
        return all
    }
}
