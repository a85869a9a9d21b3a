import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// Many calls at once: each completes exactly once with its own reply, and the call window
/// keeps the connection within the bus's limit of 128 pending replies.
@Suite struct ConcurrentCallTests {
    @Test func tenThousandConcurrentCalls() async throws {
        try await withServiceAndClient { _, service, client in
            try Echo.export(on: service, signature: try Signature("i"))
            let startedBefore = client.counters.callsStarted
            let finishedBefore = client.counters.callsFinished
            let count: Int32 = 10_000
            let results = await withTaskGroup(of: (Int32, Result<Int32, DBusError>).self) { group in
                for value in 0..<count {
                    group.addTask {
                        do throws(DBusError) {
                            let reply = try await Echo.call(Echo.immediate, on: service, from: client, [.int32(value)])
                            return (value, .success(try reply.argument(0)))
                        } catch {
                            return (value, .failure(error))
                        }
                    }
                }
                return await group.reduce(into: [(Int32, Result<Int32, DBusError>)]()) { $0.append($1) }
            }
            #expect(results.count == Int(count))
            var completions = [Int](repeating: 0, count: Int(count))
            var failures: [DBusError] = []
            for (sent, result) in results {
                completions[Int(sent)] += 1
                switch result {
                case .success(let echoed): #expect(echoed == sent)
                case .failure(let error): failures.append(error)
                }
            }
            #expect(completions.allSatisfy { $0 == 1 }, "every call completes exactly once")
            #expect(failures.isEmpty, "\(failures.prefix(3))")
            #expect(!failures.contains { $0.name == DBusError.StandardName.limitsExceeded })
            #expect(client.counters.callsStarted - startedBefore == Int(count))
            #expect(client.counters.callsFinished - finishedBefore == Int(count))
            #expect(client.counters.outstanding == 0)
        }
    }

    /// Concurrent calls answered on tasks, from several connections to one service.
    @Test func manyClientsCallingAsyncHandlers() async throws {
        try await withConnections(5) { _, connections in
            let service = connections[0]
            let clients = Array(connections.dropFirst())
            try Echo.export(on: service, signature: try Signature("s"))
            let perClient = 400
            let correct = await withTaskGroup(of: Bool.self) { group in
                for (index, client) in clients.enumerated() {
                    for call in 0..<perClient {
                        group.addTask {
                            let text = "\(index)-\(call)"
                            let echoed = try? await Echo.call(Echo.async, on: service, from: client, [.string(text)])
                            return echoed?.body == [.string(text)]
                        }
                    }
                }
                return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(correct == clients.count * perClient)
            for client in clients { #expect(client.counters.outstanding == 0) }
        }
    }

    /// Why the window exists: past 128 pending replies the bus refuses calls. With a window
    /// larger than the bus allows, the calls beyond 128 fail with `LimitsExceeded`.
    @Test func theBusRefusesMoreThan128PendingReplies() async throws {
        var options = testOptions
        options.maxCallsInFlight = 1_000
        try await withServiceAndClient(options: options) { _, connection, client in
            let service = try SlowService(connection)
            defer { service.gate.open() }
            let refused = EventLog<DBusError>()
            let count = 200
            let calls = Task {
                await withTaskGroup(of: Bool.self) { group in
                    for _ in 0..<count {
                        group.addTask {
                            do throws(DBusError) {
                                _ = try await service.callSlow(from: client)
                                return true
                            } catch {
                                refused.record(error)
                                return false
                            }
                        }
                    }
                    return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
                }
            }
            // While the callee holds 128 calls, the bus refuses every other one.
            _ = try #require(await service.received.waitFor(128))
            let errors = try #require(await refused.waitFor(count - 128))
            #expect(errors.allSatisfy { $0.name == DBusError.StandardName.limitsExceeded })
            service.gate.open()
            let answered = try await within("the answered calls") { await calls.value }
            #expect(answered == 128)
            #expect(service.received.all.count == 128)
        }
    }
}
