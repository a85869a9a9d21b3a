import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// The daemon going away while calls and subscriptions are live.
@Suite struct BusLossTests {
    @Test func theDaemonGoesAwayDuringACall() async throws {
        try await withServiceAndClient { bus, connection, client in
            let service = try SlowService(connection)
            defer { service.gate.open() }
            let clientSignals = SignalReader(
                try await client.signals(matching: MatchRule(interface: TestNames.interface)))
            let serviceSignals = SignalReader(
                try await connection.signals(matching: MatchRule(interface: TestNames.interface)))
            let call = Task { try await service.callSlow(from: client, timeout: .seconds(600)) }
            _ = try #require(await service.received.waitFor(1))

            bus.stop()

            let error = await expectDBusError { try await within("the failed call") { try await call.value } }
            #expect(error?.code == .disconnected)
            #expect(await clientSignals.next() == nil, "the subscription ends")
            #expect(await serviceSignals.next() == nil)
            #expect(client.isClosed)
            #expect(connection.isClosed)
            #expect(client.counters.outstanding == 0)

            // Everything later fails at once.
            let later = await expectDBusError { try await service.echo(1, from: client, timeout: .seconds(600)) }
            #expect(later?.code == .disconnected)
            let subscribe = await expectDBusError { try await client.signals(matching: MatchRule()) }
            #expect(subscribe?.code == .disconnected)
            let send = expectDBusErrorSync {
                try client.emitSignal(path: TestNames.object, interface: TestNames.interface, member: TestNames.ping)
            }
            #expect(send?.code == .disconnected)
            let name = await expectDBusError { try await client.requestName(try busName("org.example.Late")) }
            #expect(name?.code == .disconnected)
            #expect(client.counters.outstanding == 0)
        }
    }

    /// Calls still waiting for a window slot fail too.
    @Test func queuedCallsFailWhenTheDaemonGoesAway() async throws {
        var options = testOptions
        options.maxCallsInFlight = 1
        try await withServiceAndClient(options: options) { bus, connection, client in
            let service = try SlowService(connection)
            defer { service.gate.open() }
            let sent = Task { try await service.callSlow(from: client, timeout: .seconds(600)) }
            _ = try #require(await service.received.waitFor(1))
            let queued = Task { try await service.echo(1, from: client, timeout: .seconds(600)) }
            #expect(try await eventually { client.counters.outstanding == 2 })
            bus.stop()
            let first = await expectDBusError { try await within("the sent call") { try await sent.value } }
            let second = await expectDBusError { try await within("the queued call") { try await queued.value } }
            #expect(first?.code == .disconnected)
            #expect(second?.code == .disconnected)
            #expect(client.counters.outstanding == 0)
        }
    }

    /// Closing our side has the same effect on a call in progress.
    @Test func closingDuringACall() async throws {
        try await withServiceAndClient { _, connection, client in
            let service = try SlowService(connection)
            defer { service.gate.open() }
            let call = Task { try await service.callSlow(from: client, timeout: .seconds(600)) }
            _ = try #require(await service.received.waitFor(1))
            client.close()
            let error = await expectDBusError { try await within("the failed call") { try await call.value } }
            #expect(error?.code == .disconnected)
            #expect(client.isClosed)
            #expect(client.counters.outstanding == 0)
            // The service is unaffected.
            #expect(!connection.isClosed)
            #expect(try await connection.listNames().contains(connection.uniqueName.rawValue))
        }
    }
}
