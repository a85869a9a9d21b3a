import DBus
import Foundation
import Synchronization

/// What happened during a soak: outcomes per operation, operations that overran their
/// deadline, faults injected, and the indications the simulator confirmed versus received.
final class SoakRecord: Sendable {
    private struct State {
        var outcomes: [String: [String: Int]] = [:]
        var overruns: [String] = []
        var chaos: [String: Int] = [:]
        var confirmed: Set<UInt32> = []
        var received: [UInt32: Int] = [:]
    }

    private let state = PosixMutex(State())

    func outcome(_ operation: String, _ result: String) {
        state.withLock { $0.outcomes[operation, default: [:]][result, default: 0] += 1 }
    }

    func overrun(_ what: String) { state.withLock { $0.overruns.append(what) } }

    func chaos(_ kind: String) { state.withLock { $0.chaos[kind, default: 0] += 1 } }

    func confirmed(_ sequence: UInt32) { state.withLock { _ = $0.confirmed.insert(sequence) } }

    func received(_ sequence: UInt32) { state.withLock { $0.received[sequence, default: 0] += 1 } }

    var overruns: [String] { state.withLock { $0.overruns } }

    /// Operations of the workers (side activity such as indication subscriptions not counted).
    var operationCount: Int {
        state.withLock { state in
            SoakOperation.allCases.reduce(0) { $0 + (state.outcomes[$1.rawValue]?.values.reduce(0, +) ?? 0) }
        }
    }

    /// How often a chaos action happened.
    func chaosCount(_ kind: String) -> Int { state.withLock { $0.chaos[kind] ?? 0 } }

    /// Confirmed indications not received yet.
    var missingIndications: Set<UInt32> {
        state.withLock { state in state.confirmed.filter { state.received[$0] == nil } }
    }

    /// Indications received more than once, or never sent.
    var duplicateIndications: [UInt32: Int] { state.withLock { $0.received.filter { $0.value > 1 } } }

    var indicationCounts: (confirmed: Int, received: Int) {
        state.withLock { ($0.confirmed.count, $0.received.values.reduce(0, +)) }
    }

    var report: String {
        state.withLock { state in
            let operations = state.outcomes.keys.sorted().map { operation in
                let results = (state.outcomes[operation] ?? [:]).sorted { $0.key < $1.key }
                return "  \(operation): " + results.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            }
            let chaos = state.chaos.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            return (["operations:"] + operations + ["chaos: " + chaos.joined(separator: ", ")])
                .joined(separator: "\n")
        }
    }
}

/// How far the workers got, shared by the soak's tasks.
final class SoakProgress: Sendable {
    /// Operations handed out (may overshoot by one per worker at the end).
    let next = Atomic<Int>(0)
    /// Operations finished.
    let done = Atomic<Int>(0)
    /// Set once every operation finished: chaos and the indicator stop.
    let finished = Atomic<Bool>(false)
}
