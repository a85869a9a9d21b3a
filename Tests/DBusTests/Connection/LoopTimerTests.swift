import Synchronization
import Testing

@testable import DBus

/// Waits timed by the I/O loop (``Connection/sleep(for:)``, ``Connection/schedule(after:_:)``):
/// never early, cut short by cancellation and by the connection closing, and leaving nothing
/// outstanding.
///
/// Time is the subject here, so two tests read the clock, and only as lower bounds ("not
/// before its duration"): a busy machine makes a wake-up later, never earlier, so they cannot
/// fail for load. No test bounds how late a wake-up may be.
@Suite struct LoopTimerTests {
    final class Order: Sendable {
        private let list = PosixMutex<[Int]>([])
        func append(_ value: Int) { list.withLock { $0.append(value) } }
        var values: [Int] { list.withLock { $0 } }
    }

    @Test("a sleep lasts at least its duration, and waits for nothing else")
    func sleepsItsDuration() async throws {
        try await withConnections(1) { _, connections in
            let connection = connections[0]
            let start = ContinuousClock.now
            try await connection.sleep(for: .milliseconds(30))
            #expect(ContinuousClock.now - start >= .milliseconds(30))
            #expect(connection.counters.outstanding == 0)
        }
    }

    @Test("wake-ups come in the order of their deadlines, not of their setting")
    func deadlineOrder() async throws {
        try await withConnections(1) { _, connections in
            let connection = connections[0]
            let order = Order()
            // Set back to back: their deadlines are in the order of these durations.
            connection.schedule(after: .milliseconds(200)) { order.append(0) }
            connection.schedule(after: .milliseconds(5)) { order.append(1) }
            connection.schedule(after: .milliseconds(100)) { order.append(2) }
            let allFired = try await eventually { order.values.count == 3 }
            #expect(allFired)
            #expect(order.values == [1, 2, 0])
        }
    }

    @Test("cancelling the task ends a long sleep with cancelled, at once")
    func cancellation() async throws {
        try await withConnections(1) { _, connections in
            let connection = connections[0]
            let sleeper = Task { try await connection.sleep(for: .seconds(3600)) }
            // Cancelled while it sleeps, or before it starts: either way it ends cancelled.
            sleeper.cancel()
            let outcome = await sleeper.result
            #expect(throws: DBusError.self) { try outcome.get() }
            if case .failure(let error) = outcome { #expect((error as? DBusError)?.code == .cancelled) }
            #expect(connection.counters.outstanding == 0)
        }
    }

    @Test("closing the connection ends a sleep with disconnected; a later one fails at once")
    func closing() async throws {
        try await withConnections(1) { _, connections in
            let connection = connections[0]
            let sleeper = Task { try await connection.sleep(for: .seconds(3600)) }
            let sleeping = try await eventually { connection.counters.outstanding == 1 }
            #expect(sleeping)
            let fired = Atomic<Bool>(false)
            connection.schedule(after: .seconds(3600)) { fired.store(true, ordering: .releasing) }
            connection.close()
            if case .failure(let error) = await sleeper.result {
                #expect((error as? DBusError)?.code == .disconnected)
            } else {
                Issue.record("the sleep outlived the connection")
            }
            let woken = try await eventually { fired.load(ordering: .acquiring) }
            #expect(woken)
            await #expect(throws: DBusError.self) { try await connection.sleep(for: .milliseconds(1)) }
            #expect(connection.counters.outstanding == 0)
        }
    }

    @Test("a scheduled wake-up runs once its time has come, never before")
    func scheduled() async throws {
        try await withConnections(1) { _, connections in
            let connection = connections[0]
            let start = ContinuousClock.now
            let firedAfter = PosixMutex<Duration?>(nil)
            connection.schedule(after: .milliseconds(20)) {
                firedAfter.withLock { $0 = ContinuousClock.now - start }
            }
            let fired = try await eventually { firedAfter.withLock { $0 } != nil }
            #expect(fired)
            #expect(try #require(firedAfter.withLock { $0 }) >= .milliseconds(20))
        }
    }

    @Test(
        "on a closed connection a wake-up runs when due, never at once on the caller: one that asks again does not recurse"
    )
    func scheduledAfterClose() async throws {
        try await withConnections(1) { _, connections in
            let connection = connections[0]
            connection.close()
            // A client that keeps its own deadline and asks for another wake-up while it is not
            // due, as the GATT client does: fired at once on the caller, this recursed.
            let due = ContinuousClock.now + .milliseconds(30)
            let wakes = Atomic<Int>(0)
            let done = Atomic<Bool>(false)
            let depth = Atomic<Int>(0)
            let deepest = Atomic<Int>(0)
            @Sendable func wake() {
                let level = depth.add(1, ordering: .relaxed).newValue
                deepest.max(level, ordering: .relaxed)
                defer { depth.subtract(1, ordering: .relaxed) }
                wakes.add(1, ordering: .relaxed)
                if ContinuousClock.now < due {
                    connection.schedule(after: due - .now) { wake() }
                } else {
                    done.store(true, ordering: .releasing)
                }
            }
            connection.schedule(after: .milliseconds(30)) { wake() }
            let finished = try await eventually { done.load(ordering: .acquiring) }
            #expect(finished)
            #expect(deepest.load(ordering: .relaxed) == 1, "each wake-up ran on its own, not inside the last")
        }
    }
}
