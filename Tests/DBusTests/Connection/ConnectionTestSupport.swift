import DBus
import DBusTestSupport
import Foundation
import Testing

/// Shared helpers of the bus-level tests: every test runs against its own private
/// `dbus-daemon` and closes every connection it opens, on every exit path.

/// Options for test connections: a default deadline short enough that a lost reply fails the
/// test instead of stalling the suite, long enough never to fire on a loaded machine.
let testOptions: ConnectionOptions = {
    var options = ConnectionOptions()
    options.defaultTimeout = .seconds(20)
    return options
}()

/// How long a test waits for an event that should arrive at once before calling it missing.
let eventDeadline: Duration = .seconds(20)

/// Runs `body` with a fresh private bus and `count` connections to it, all closed afterwards.
func withConnections<Result>(
    _ count: Int, options: ConnectionOptions = testOptions, limits: BusLimits = .systemBus,
    _ body: (TestBus, [Connection]) async throws -> Result
) async throws -> Result {
    try await withTestBus(limits: limits) { bus in
        var connections: [Connection] = []
        defer { for connection in connections { connection.close() } }
        for _ in 0..<count { connections.append(try await bus.connect(options: options)) }
        return try await body(bus, connections)
    }
}

/// Runs `body` with a private bus and two connections: one that exports, one that calls.
func withServiceAndClient<Result>(
    options: ConnectionOptions = testOptions, limits: BusLimits = .systemBus,
    _ body: (_ bus: TestBus, _ service: Connection, _ client: Connection) async throws -> Result
) async throws -> Result {
    try await withConnections(2, options: options, limits: limits) { bus, connections in
        try await body(bus, connections[0], connections[1])
    }
}

/// Thrown when an awaited event does not happen before its deadline.
struct DeadlineExceeded: Error, CustomStringConvertible {
    let what: String
    var description: String { "\(what) did not happen within the deadline" }
}

/// Awaits `operation`, but gives up with ``DeadlineExceeded`` after `deadline`, even when the
/// operation ignores cancellation (it is cancelled and abandoned then), so a hang fails the
/// test instead of stalling the suite.
func within<T: Sendable>(
    _ what: String, deadline: Duration = eventDeadline,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = PosixMutex<CheckedContinuation<T, any Error>?>(nil)
    let resume: @Sendable (Result<T, any Error>) -> Void = { result in
        outcome.withLock { $0.take() }?.resume(with: result)
    }
    var tasks: [Task<Void, Never>] = []
    defer { for task in tasks { task.cancel() } }
    return try await withCheckedThrowingContinuation { continuation in
        outcome.withLock { $0 = continuation }
        tasks.append(
            Task {
                do { resume(.success(try await operation())) } catch { resume(.failure(error)) }
            })
        tasks.append(
            Task {
                try? await Task.sleep(for: deadline)
                resume(.failure(DeadlineExceeded(what: what)))
            })
    }
}

/// Checks `condition` until it holds or `deadline` passes, for states that signal no event
/// (a connection's counters). The short pause between checks is a polling interval, not a
/// guess at how long something takes: the result depends only on the condition.
func eventually(within deadline: Duration = eventDeadline, _ condition: () -> Bool) async throws -> Bool {
    let clock = ContinuousClock()
    let end = clock.now.advanced(by: deadline)
    while !condition() {
        if clock.now >= end { return false }
        try await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// Reads a subscription one message at a time; a read that waits longer than its deadline
/// cancels the subscription, so the read returns `nil` and the test fails instead of hanging.
final class SignalReader {
    let subscription: SignalSubscription
    private var iterator: SignalSubscription.AsyncIterator

    init(_ subscription: SignalSubscription) {
        self.subscription = subscription
        iterator = subscription.makeAsyncIterator()
    }

    /// The next message, or `nil` if the subscription ended or nothing came in time.
    func next(within deadline: Duration = eventDeadline) async -> DBusMessage? {
        let subscription = self.subscription
        let watchdog = Task {
            try await Task.sleep(for: deadline)
            subscription.cancel()
        }
        defer { watchdog.cancel() }
        return await iterator.next()
    }

    /// The next `count` messages; fewer if the subscription ended or a read timed out.
    func next(_ count: Int, within deadline: Duration = eventDeadline) async -> [DBusMessage] {
        var messages: [DBusMessage] = []
        while messages.count < count, let message = await next(within: deadline) { messages.append(message) }
        return messages
    }

    /// Ends the subscription and returns what was buffered: after a barrier (see
    /// ``roundTrip(from:to:)``), exactly what the connection routed to it.
    func cancelAndDrain() async -> [DBusMessage] {
        subscription.cancel()
        var messages: [DBusMessage] = []
        while let message = await next() { messages.append(message) }
        return messages
    }
}

/// A one-shot latch that async handlers wait on; opening it releases every waiter, now and later.
final class Gate: Sendable {
    private let state = PosixMutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Events reported from handlers to the test, awaited with a deadline.
final class EventLog<Event: Sendable>: Sendable {
    private struct State {
        var events: [Event] = []
        var waiters: [UInt64: (count: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
        var nextID: UInt64 = 0
    }

    private let state = PosixMutex(State())

    func record(_ event: Event) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.events.append(event)
            let count = state.events.count
            let due = state.waiters.filter { $0.value.count <= count }.map(\.key)
            return due.compactMap { state.waiters.removeValue(forKey: $0)?.continuation }
        }
        for waiter in ready { waiter.resume() }
    }

    /// Everything recorded so far.
    var all: [Event] { state.withLock { $0.events } }

    /// Waits until at least `count` events were recorded and returns all of them, or returns
    /// `nil` when the deadline passes first.
    func waitFor(_ count: Int, within deadline: Duration = eventDeadline) async -> [Event]? {
        try? await DBusTests.within("\(count) events", deadline: deadline) {
            await self.reach(count)
            return self.all
        }
    }

    private func reach(_ count: Int) async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.events.count >= count || Task.isCancelled { return true }
                    state.waiters[id] = (count, continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }
}

/// Names used throughout the tests.
enum TestNames {
    static let interface = fixedName(try InterfaceName("org.example.Test"))
    static let object = fixedName(try ObjectPath("/test"))
    static let ping = fixedName(try MemberName("Ping"))
}

/// Test shorthand for names that are known to be valid; an invalid one fails the test.
func member(_ text: String) throws(DBusError) -> MemberName { try MemberName(text) }
func path(_ text: String) throws(DBusError) -> ObjectPath { try ObjectPath(text) }
func interface(_ text: String) throws(DBusError) -> InterfaceName { try InterfaceName(text) }
func busName(_ text: String) throws(DBusError) -> BusName { try BusName(text) }
func signature(_ text: String) throws(DBusError) -> Signature { try Signature(text) }

/// Exports `Ping` (no arguments, answered on the I/O thread) at ``TestNames/object``: a call to
/// it is a barrier, because its reply leaves after everything the exporter queued before.
func exportPing(on connection: Connection) throws {
    try connection.export(
        [ExportedInterface(TestNames.interface, methods: [.immediate(TestNames.ping) { _ in [] }])],
        at: TestNames.object)
}

/// A round trip from `caller` to `exporter`'s `Ping`: once it returns, every message `exporter`
/// queued before the call arrived (signals included) has reached `caller`'s router.
func roundTrip(from caller: Connection, to exporter: Connection) async throws {
    _ = try await caller.call(
        destination: exporter.uniqueName, path: TestNames.object, interface: TestNames.interface,
        member: TestNames.ping)
}

/// Expects `operation` to throw a ``DBusError`` and returns it.
func expectDBusError<T>(
    sourceLocation: SourceLocation = #_sourceLocation, _ operation: () async throws -> T
) async -> DBusError? {
    do {
        let value = try await operation()
        Issue.record("expected a DBusError, got \(value)", sourceLocation: sourceLocation)
    } catch let error as DBusError {
        return error
    } catch {
        Issue.record("expected a DBusError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// Expects a synchronous `operation` to throw a ``DBusError`` and returns it.
func expectDBusErrorSync<T>(
    sourceLocation: SourceLocation = #_sourceLocation, _ operation: () throws -> T
) -> DBusError? {
    do {
        let value = try operation()
        Issue.record("expected a DBusError, got \(value)", sourceLocation: sourceLocation)
    } catch let error as DBusError {
        return error
    } catch {
        Issue.record("expected a DBusError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// The echo service: methods that answer with the arguments they were called with.
enum Echo {
    static let interface = fixedName(try InterfaceName("org.example.Echo"))
    static let path = fixedName(try ObjectPath("/org/example/echo"))
    /// Answered on the I/O thread.
    static let immediate = fixedName(try MemberName("EchoImmediate"))
    /// Answered on a task of its own.
    static let async = fixedName(try MemberName("EchoAsync"))

    /// Exports both echo methods with `signature` as their in and out signature, and `Ping`
    /// (see ``exportPing(on:)``).
    static func export(on connection: Connection, signature: Signature) throws {
        try connection.export(
            [
                ExportedInterface(
                    interface,
                    methods: [
                        .immediate(immediate, in: signature, out: signature) { call in call.body },
                        ExportedMethod(async, in: signature, out: signature) { call in call.body },
                    ])
            ], at: path)
        try exportPing(on: connection)
    }

    /// Calls `method` of the echo service on `exporter` with `arguments`.
    static func call(
        _ method: MemberName, on exporter: Connection, from caller: Connection, _ arguments: [DBusValue],
        timeout: Duration? = nil
    ) async throws(DBusError) -> DBusMessage {
        try await caller.call(
            destination: exporter.uniqueName, path: path, interface: interface, member: method,
            arguments: arguments, timeout: timeout)
    }
}

private func fixedName<T>(_ make: @autoclosure () throws(DBusError) -> T) -> T {
    do { return try make() } catch { preconditionFailure("invalid test constant: \(error)") }
}
