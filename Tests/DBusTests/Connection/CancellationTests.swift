import DBusTestSupport
import Foundation
import Synchronization
import Testing

@testable import DBus

/// Calls made by tasks that are cancelled.
@Suite struct CancellationTests {
    /// A task cancelled before it calls gets `cancelled` at once and sends nothing.
    @Test func cancelledBeforeCalling() async throws {
        try await withServiceAndClient { _, service, client in
            let invocations = Atomic<Int>(0)
            try service.export(
                [
                    ExportedInterface(
                        TestNames.interface,
                        methods: [
                            .immediate(try member("Count")) { _ in
                                invocations.add(1, ordering: .relaxed)
                                return []
                            },
                            .immediate(TestNames.ping) { _ in [] },
                        ])
                ], at: TestNames.object)
            let started = client.counters.callsStarted
            let count = try member("Count")
            let task = Task { () async throws(DBusError) -> DBusMessage in
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.call(
                    destination: service.uniqueName, path: TestNames.object, interface: TestNames.interface,
                    member: count, timeout: .seconds(60))
            }
            let error = await expectDBusError { try await within("the cancelled call") { try await task.value } }
            #expect(error?.code == .cancelled)
            #expect(client.counters.callsStarted == started, "nothing was started")
            // Calls from one connection arrive in order: had the call been sent, it would have
            // been answered before this one.
            try await roundTrip(from: client, to: service)
            #expect(invocations.load(ordering: .relaxed) == 0)
            #expect(client.counters.outstanding == 0)
        }
    }

    /// Cancelling a task during a slow call ends the call at once, long before its deadline;
    /// the reply that comes later is dropped safely.
    @Test func cancelledDuringASlowCall() async throws {
        try await withServiceAndClient { _, connection, client in
            let service = try SlowService(connection)
            defer { service.gate.open() }
            let task = Task { try await service.callSlow(from: client, timeout: .seconds(600)) }
            let calls = try #require(await service.received.waitFor(1))
            #expect(client.counters.outstanding == 1)
            task.cancel()
            // The deadline of this wait is far shorter than the call's own.
            let error = await expectDBusError { try await within("the cancelled call") { try await task.value } }
            #expect(error?.code == .cancelled)
            #expect(client.counters.outstanding == 0)

            let ignoredBefore = client.counters.repliesIgnoredCount
            try service.answerByHand(calls[0])
            try await roundTrip(from: client, to: connection)
            #expect(client.counters.repliesIgnoredCount == ignoredBefore + 1)
            #expect(try await service.echo(5, from: client) == 5)
            #expect(client.counters.outstanding == 0)
        }
    }

    /// A call still waiting for a window slot is dropped from the queue and never sent.
    @Test func cancelledWhileQueued() async throws {
        var options = testOptions
        options.maxCallsInFlight = 1
        try await withServiceAndClient(options: options) { _, connection, client in
            let service = try SlowService(connection)
            defer { service.gate.open() }
            let first = Task { try await service.callSlow(from: client, timeout: .seconds(60)) }
            _ = try #require(await service.received.waitFor(1))
            let queued = Task { try await service.callSlow(from: client, timeout: .seconds(60)) }
            // Wait until the second call is counted as suspended, then cancel it.
            #expect(try await eventually { client.counters.outstanding == 2 })
            queued.cancel()
            let error = await expectDBusError { try await within("the queued call") { try await queued.value } }
            #expect(error?.code == .cancelled)
            service.gate.open()
            _ = try await within("the first call") { try await first.value }
            #expect(try await service.echo(3, from: client) == 3)
            #expect(service.received.all.count == 1, "the cancelled call was never sent")
            #expect(client.counters.outstanding == 0)
        }
    }

    /// Cancelling many suspended calls at once resumes each exactly once.
    @Test func cancellingAGroupOfCalls() async throws {
        try await withServiceAndClient { _, connection, client in
            let service = try SlowService(connection)
            defer { service.gate.open() }
            let startedBefore = client.counters.callsStarted
            let count = 300
            let group = Task {
                await withTaskGroup(of: DBusError.Code?.self) { group in
                    for _ in 0..<count {
                        group.addTask {
                            do throws(DBusError) {
                                _ = try await service.callSlow(from: client, timeout: .seconds(600))
                                return nil
                            } catch {
                                return error.code
                            }
                        }
                    }
                    return await group.reduce(into: [DBusError.Code?]()) { $0.append($1) }
                }
            }
            // The window lets 128 through to the callee; the rest wait in the queue.
            _ = try #require(await service.received.waitFor(client.options.maxCallsInFlight))
            #expect(try await eventually { client.counters.outstanding == count })
            group.cancel()
            let codes = try await within("the cancelled calls") { await group.value }
            #expect(codes.count == count)
            #expect(codes.allSatisfy { $0 == .cancelled })
            #expect(client.counters.outstanding == 0)
            #expect(client.counters.callsStarted - startedBefore == count)

            // Once the callee answers, the bus forgets the abandoned calls and calls work again.
            service.gate.open()
            #expect(try await service.echo(9, from: client) == 9)
            #expect(service.received.all.count == client.options.maxCallsInFlight)
        }
    }
}
