import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// Calls whose reply does not come before their deadline.
@Suite struct TimeoutTests {
    @Test func slowCallTimesOutAndTheConnectionStaysUsable() async throws {
        try await withServiceAndClient { _, connection, client in
            let service = try SlowService(connection)
            defer { service.gate.open() }
            let error = await expectDBusError { try await service.callSlow(from: client, timeout: .milliseconds(200)) }
            #expect(error?.code == .timeout)
            #expect(client.counters.outstanding == 0)
            #expect(try await service.echo(7, from: client) == 7)

            // The answer the callee sends after all is dropped, and counted.
            let calls = try #require(await service.received.waitFor(1))
            let ignoredBefore = client.counters.repliesIgnoredCount
            try service.answerByHand(calls[0])
            try await roundTrip(from: client, to: connection)
            #expect(client.counters.repliesIgnoredCount == ignoredBefore + 1)
            #expect(try await service.echo(8, from: client) == 8)
            #expect(client.counters.outstanding == 0)
            #expect(client.counters.callsStarted == client.counters.callsFinished)
        }
    }

    /// A call waiting for a window slot times out in the queue, without ever being sent.
    @Test func queuedCallTimesOutBeforeBeingSent() async throws {
        var options = testOptions
        options.maxCallsInFlight = 1
        try await withServiceAndClient(options: options) { _, connection, client in
            let service = try SlowService(connection)
            defer { service.gate.open() }
            let first = Task { try await service.callSlow(from: client, timeout: .seconds(60)) }
            _ = try #require(await service.received.waitFor(1))
            let error = await expectDBusError { try await service.echo(1, from: client, timeout: .milliseconds(200)) }
            #expect(error?.code == .timeout)
            service.gate.open()
            let reply = try await within("the first call's reply") { try await first.value }
            #expect(try reply.argument(0, as: String.self) == "late")
            #expect(try await service.echo(2, from: client) == 2)
            #expect(service.received.all.count == 1)
            #expect(client.counters.outstanding == 0)
        }
    }

    /// The loop keeps sent calls' deadlines itself and drops those of answered calls in bulk once
    /// they pile up; a call in flight across many such clean-ups must still time out.
    @Test func deadlinesSurviveTheCleanUpOfAnsweredCalls() async throws {
        try await withServiceAndClient { _, connection, client in
            let service = try SlowService(connection)
            defer { service.gate.open() }
            let slow = Task { try await service.callSlow(from: client, timeout: .seconds(5)) }
            _ = try #require(await service.received.waitFor(1))
            // Answered calls, each with a long deadline, far more than the clean-up threshold.
            for value in Int32(0)..<1_500 { #expect(try await service.echo(value, from: client) == value) }
            let error = await expectDBusError { try await within("the slow call") { try await slow.value } }
            #expect(error?.code == .timeout)
            #expect(try await service.echo(1, from: client) == 1)
            #expect(client.counters.outstanding == 0)
        }
    }

    /// Calls `Slow` `count` times at once with a short deadline; all must time out.
    private func timeOut(_ count: Int, on service: SlowService, from client: Connection) async {
        let codes = await withTaskGroup(of: DBusError.Code?.self) { group in
            for _ in 0..<count {
                group.addTask {
                    do throws(DBusError) {
                        _ = try await service.callSlow(from: client, timeout: .milliseconds(300))
                        return nil
                    } catch {
                        return error.code
                    }
                }
            }
            return await group.reduce(into: [DBusError.Code?]()) { $0.append($1) }
        }
        #expect(codes.count == count)
        #expect(codes.allSatisfy { $0 == .timeout }, "\(codes)")
    }

    /// Starts `count` echo calls at once; the task returns what each ended with.
    private func startEchoes(
        _ count: Int32, on service: SlowService, from client: Connection
    ) -> Task<[Result<Int32, DBusError>], Never> {
        Task {
            await withTaskGroup(of: Result<Int32, DBusError>.self) { group in
                for value in 0..<count {
                    group.addTask {
                        do throws(DBusError) {
                            return .success(try await service.echo(value, from: client))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                return await group.reduce(into: [Result<Int32, DBusError>]()) { $0.append($1) }
            }
        }
    }

    private func expectAllEchoed(_ results: [Result<Int32, DBusError>], _ count: Int32) {
        let failures = results.compactMap { result -> DBusError? in
            if case .failure(let error) = result { return error }
            return nil
        }
        #expect(failures.isEmpty, "\(failures)")
        #expect(Set(results.compactMap { try? $0.get() }) == Set(0..<count))
    }

    /// The bus still counts a call we gave up on as awaiting its reply, so the call keeps its
    /// window slot until that reply comes: otherwise the next calls would exceed the bus's
    /// limit of 128 pending replies and fail with `LimitsExceeded`.
    @Test func timedOutCallsKeepTheirWindowSlotUntilAnswered() async throws {
        try await withServiceAndClient { _, connection, client in
            let service = try SlowService(connection)
            defer { service.gate.open() }
            await timeOut(client.options.maxCallsInFlight, on: service, from: client)
            let echoes = startEchoes(20, on: service, from: client)
            #expect(try await eventually { client.counters.outstanding == 20 })
            // Had the echo calls been sent, the bus would have refused them by the time the
            // mark, sent after them, reaches the service.
            try service.mark(from: client)
            _ = try #require(await service.marks.waitFor(1))
            service.gate.open()
            expectAllEchoed(try await within("the echo calls") { await echoes.value }, 20)
            #expect(client.counters.outstanding == 0)
        }
    }

    /// When the callee never answers, the bus's own `NoReply` (after its `reply_timeout`)
    /// frees the slots of the abandoned calls.
    @Test func theBusReplyTimeoutFreesAbandonedSlots() async throws {
        var limits = BusLimits.systemBus
        limits.replyTimeoutMilliseconds = 1_000
        try await withServiceAndClient(limits: limits) { _, connection, client in
            let service = try SlowService(connection)
            defer { service.gate.open() }
            await timeOut(client.options.maxCallsInFlight, on: service, from: client)
            let echoes = startEchoes(20, on: service, from: client)
            expectAllEchoed(try await within("the echo calls") { await echoes.value }, 20)
            #expect(client.counters.outstanding == 0)
            #expect(client.counters.repliesIgnoredCount >= 1, "the bus answered the abandoned calls")
        }
    }
}
