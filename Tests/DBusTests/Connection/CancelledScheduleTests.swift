import Testing

@testable import DBus

/// ``Connection/cancelScheduled(_:)``: a wake-up forgotten before its time never runs. Told
/// apart by order, not by time: the loop runs wake-ups in the order of their deadlines, so once a
/// later one has run, an earlier one still set would have run before it.
@Suite struct CancelledScheduleTests {
    @Test("a cancelled wake-up never runs; the others do")
    func cancelled() async throws {
        try await withConnections(1) { _, connections in
            let connection = connections[0]
            let ran = PosixMutex<[Int]>([])
            // Set and cancelled from the I/O thread, in one job: the loop cannot fire the early
            // wake-up between its setting and its cancelling, however late this thread runs
            // (from another thread, a cancel delayed past 10 ms by a busy machine came too late).
            await Task(executorPreference: connection.executor) {
                let early = connection.schedule(after: .milliseconds(10)) { ran.withLock { $0.append(1) } }
                connection.schedule(after: .milliseconds(20)) { ran.withLock { $0.append(2) } }
                connection.cancelScheduled(early)
                connection.schedule(after: .milliseconds(40)) { ran.withLock { $0.append(3) } }
            }.value
            let twoRan = try await eventually { ran.withLock { $0.count } >= 2 }
            #expect(twoRan)
            #expect(ran.withLock { $0 } == [2, 3])
        }
    }

    @Test("cancelling a wake-up that has run, or one twice, changes nothing")
    func cancelledLate() async throws {
        try await withConnections(1) { _, connections in
            let connection = connections[0]
            let ran = PosixMutex(0)
            let id = connection.schedule(after: .milliseconds(1)) { ran.withLock { $0 += 1 } }
            let ranOnce = try await eventually { ran.withLock { $0 } == 1 }
            #expect(ranOnce)
            connection.cancelScheduled(id)
            connection.cancelScheduled(id)
            let after = PosixMutex(false)
            connection.schedule(after: .milliseconds(1)) { after.withLock { $0 = true } }
            let laterRan = try await eventually { after.withLock { $0 } }
            #expect(laterRan)
            #expect(ran.withLock { $0 } == 1)
        }
    }
}
