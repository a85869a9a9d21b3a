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
    let socketsOpenedCount = Atomic<Int>(0)
    let socketsClosedCount = Atomic<Int>(0)
    private let bus: ConnectionCounters?
    /// Suspended tasks by where they wait, for finding one that is never resumed.
    private let waiting = PosixMutex<[SuspensionSite: Int]>([:])
    /// GATT operations suspended in their peripheral's client: counted apart, with an atomic,
    /// because they are the most frequent wait of all.
    private let operationsWaiting = Atomic<Int>(0)
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
    /// Signals the bus delivered to the central's connection: what following bluetoothd costs
    /// it (a characteristic's changes come only while it is subscribed).
    public var busSignalsReceived: Int { bus?.signalsReceived ?? 0 }

    /// Sockets watched by the SDK (L2CAP channels, published PSMs and connects under way,
    /// AcquireWrite channels) opened.
    public var socketsOpened: Int { socketsOpenedCount.load(ordering: .relaxed) }
    /// Those closed.
    public var socketsClosed: Int { socketsClosedCount.load(ordering: .relaxed) }

    /// Suspended tasks, open streams, bus calls not yet resolved and open sockets,
    /// together.
    public var outstanding: Int {
        (continuationsCreated - continuationsResumed) + (streamsOpened - streamsEnded)
            + (busCallsStarted - busCallsFinished) + (socketsOpened - socketsClosed)
    }

    /// Every counter, for test failures and logs, with where suspended tasks wait.
    public var summary: String {
        var sites = waiting.withLock { $0 }.filter { $0.value > 0 }.map { ($0.key.description, $0.value) }
            .sorted { $0.0 < $1.0 }
        let operations = operationsWaiting.load(ordering: .relaxed)
        if operations > 0 { sites.append(("GATT operations", operations)) }
        let waits =
            sites.isEmpty ? "" : " (waiting: " + sites.map { "\($0.0) ×\($0.1)" }.joined(separator: ", ") + ")"
        return "continuations \(continuationsResumed)/\(continuationsCreated) resumed, "
            + "streams \(streamsEnded)/\(streamsOpened) ended, bus calls \(busCallsFinished)/\(busCallsStarted) finished"
            + (socketsOpened > 0 ? ", sockets \(socketsClosed)/\(socketsOpened) closed" : "")
            + waits
    }

    /// Counts a task about to suspend at `file:line`; pair with ``didResume(_:)``. The caller
    /// suspends with a plain `withCheckedContinuation` between the two: wrapping it in an async
    /// function would add a hop between an actor's check and its suspension (its waiter could
    /// then be queued after the wake-up it waits for, and never be resumed).
    func willSuspend(file: StaticString = #fileID, line: UInt = #line) -> SuspensionSite {
        // A static string and a number: nothing is formatted on the path of every operation.
        let site = SuspensionSite(file: file, line: line)
        created.add(1, ordering: .relaxed)
        waiting.withLock { $0[site, default: 0] += 1 }
        return site
    }

    /// ``willSuspend(file:line:)`` for a GATT operation waiting in its client: atomics only,
    /// no lock, on the path of every read and write. Pair with ``operationDidResume()``.
    func operationWillSuspend() {
        created.add(1, ordering: .relaxed)
        operationsWaiting.add(1, ordering: .relaxed)
    }

    /// Counts a GATT operation's task as resumed.
    func operationDidResume() {
        operationsWaiting.subtract(1, ordering: .relaxed)
        resumed.add(1, ordering: .relaxed)
    }

    /// Counts the task suspended at `site` as resumed.
    func didResume(_ site: SuspensionSite) {
        waiting.withLock { $0[site, default: 0] -= 1 }
        resumed.add(1, ordering: .relaxed)
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

extension BLEDiagnostics {
    /// Counts an event buffer now and its end when it ends, then runs `onTermination`.
    func track<Element>(_ buffer: EventBuffer<Element>, onTermination: @escaping @Sendable () -> Void) {
        opened.add(1, ordering: .relaxed)
        buffer.onTermination { [self] in
            ended.add(1, ordering: .relaxed)
            onTermination()
        }
    }
}

extension BLEDiagnostics? {
    /// ``BLEDiagnostics/willSuspend(file:line:)`` when counting.
    func willSuspend(file: StaticString = #fileID, line: UInt = #line) -> SuspensionSite? {
        self?.willSuspend(file: file, line: line)
    }

    /// ``BLEDiagnostics/didResume(_:)`` when counting.
    func didResume(_ site: SuspensionSite?) {
        if let self, let site { self.didResume(site) }
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

/// Where a task suspends (`file:line`), compared by the file name's address and the line.
struct SuspensionSite: Hashable, Sendable, CustomStringConvertible {
    let file: StaticString
    let line: UInt

    static func == (lhs: SuspensionSite, rhs: SuspensionSite) -> Bool {
        lhs.line == rhs.line && lhs.file.utf8Start == rhs.file.utf8Start
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(line)
        hasher.combine(UInt(bitPattern: file.utf8Start))
    }

    var description: String { "\(file):\(line)" }
}
