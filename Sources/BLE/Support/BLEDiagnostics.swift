import DBus
import Synchronization

/// Live counters of everything a ``Central`` (and the peripherals and characteristics it
/// hands out) leaves waiting: suspended tasks, open streams, and D-Bus calls in flight.
///
/// Always on and cheap (relaxed atomic additions). Once a central is closed and its users
/// are done, ``outstanding`` is zero: a non-zero value is a task that will never be resumed
/// or a stream that will never end. The test suite checks this after every bus test.
public final class BLEDiagnostics: Sendable {
    let created = Atomic<Int>(0)
    let resumed = Atomic<Int>(0)
    let opened = Atomic<Int>(0)
    let ended = Atomic<Int>(0)
    private let bus: ConnectionCounters?
    /// Suspended tasks by where they wait (file:line), for finding one that is never resumed.
    private let waiting = Mutex<[String: Int]>([:])
    /// The unique bus name of the central's connection, to find it in the bus daemon's
    /// statistics (`org.freedesktop.DBus.Debug.Stats`).
    public let connectionName: String?

    init(bus: ConnectionCounters?, connectionName: String?) {
        self.bus = bus
        self.connectionName = connectionName
    }

    /// Continuations the SDK suspended a task on.
    public var continuationsCreated: Int { created.load(ordering: .relaxed) }
    /// Those whose task has been resumed.
    public var continuationsResumed: Int { resumed.load(ordering: .relaxed) }
    /// Stream continuations (state, events, scans, notifications, internal listeners) created.
    public var streamsOpened: Int { opened.load(ordering: .relaxed) }
    /// Those that ended (finished, or their consumer went away).
    public var streamsEnded: Int { ended.load(ordering: .relaxed) }
    /// Calls to bluetoothd started on the central's bus connection.
    public var busCallsStarted: Int { bus?.callsStarted ?? 0 }
    /// Those whose caller has been resumed.
    public var busCallsFinished: Int { bus?.callsFinished ?? 0 }

    /// Suspended tasks, open streams and bus calls not yet resolved, together.
    public var outstanding: Int {
        (continuationsCreated - continuationsResumed) + (streamsOpened - streamsEnded)
            + (busCallsStarted - busCallsFinished)
    }

    /// Every counter, for test failures and logs, with where suspended tasks wait.
    public var summary: String {
        let sites = waiting.withLock { $0 }.filter { $0.value > 0 }.sorted { $0.key < $1.key }
        let waits =
            sites.isEmpty ? "" : " (waiting: " + sites.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ") + ")"
        return "continuations \(continuationsResumed)/\(continuationsCreated) resumed, "
            + "streams \(streamsEnded)/\(streamsOpened) ended, bus calls \(busCallsFinished)/\(busCallsStarted) finished"
            + waits
    }

    /// Suspends the task like `withCheckedContinuation`, counted.
    func suspend<T: Sendable>(
        isolation: isolated (any Actor)? = #isolation, file: String = #fileID, line: Int = #line,
        _ body: (CheckedContinuation<T, Never>) -> Void
    ) async -> T {
        created.add(1, ordering: .relaxed)
        let site = "\(file):\(line)"
        waiting.withLock { $0[site, default: 0] += 1 }
        defer {
            waiting.withLock { $0[site, default: 0] -= 1 }
            resumed.add(1, ordering: .relaxed)
        }
        return await withCheckedContinuation(isolation: isolation, body)
    }

    /// Counts a stream continuation now and its end at termination, chaining `onTermination`.
    func track<Element>(
        _ continuation: AsyncStream<Element>.Continuation,
        onTermination: (@Sendable (AsyncStream<Element>.Continuation.Termination) -> Void)? = nil
    ) {
        opened.add(1, ordering: .relaxed)
        continuation.onTermination = { [self] termination in
            ended.add(1, ordering: .relaxed)
            onTermination?(termination)
        }
    }
}

extension BLEDiagnostics? {
    /// ``BLEDiagnostics/suspend(isolation:_:)`` when counting, plain `withCheckedContinuation` otherwise.
    func suspend<T: Sendable>(
        isolation: isolated (any Actor)? = #isolation, file: String = #fileID, line: Int = #line,
        _ body: (CheckedContinuation<T, Never>) -> Void
    ) async -> T {
        guard let self else { return await withCheckedContinuation(isolation: isolation, body) }
        return await self.suspend(isolation: isolation, file: file, line: line, body)
    }

    /// ``BLEDiagnostics/track(_:onTermination:)`` when counting; sets `onTermination` otherwise.
    func track<Element>(
        _ continuation: AsyncStream<Element>.Continuation,
        onTermination: (@Sendable (AsyncStream<Element>.Continuation.Termination) -> Void)? = nil
    ) {
        guard let self else {
            continuation.onTermination = onTermination
            return
        }
        self.track(continuation, onTermination: onTermination)
    }
}
