import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// A connection with ``ConnectionOptions/reconnection`` losing its bus and finding it again at
/// the same address: calls fail while it is away (at once, not at their deadline), the same
/// I/O thread carries on, and it comes back under a new unique name.
@Suite struct BusReconnectionTests {
    static var reconnecting: ConnectionOptions {
        var options = testOptions
        options.reconnection = BusReconnection(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200))
        return options
    }

    @Test func itComesBackWhenTheBusDoes() async throws {
        try await withTestBus { bus in
            let connection = try await bus.connect(options: Self.reconnecting)
            defer { connection.close() }
            let before = connection.uniqueName
            let executor = ObjectIdentifier(connection.executor)
            let reopened = PosixMutex<[BusName]>([])
            connection.whenReopened { name in reopened.withLock { $0.append(name) } }
            let quiet = try InterfaceName("org.example.Quiet")
            let signals = SignalReader(try await connection.signals(matching: MatchRule(interface: quiet)))

            bus.crash()
            #expect(await signals.next() == nil, "the subscription ends with the bus")
            #expect(try await eventually { !connection.isConnected })
            #expect(!connection.isClosed, "it is between buses, not closed")
            let away = await expectDBusError { try await connection.listNames() }
            #expect(away?.code == .disconnected)
            let subscribe = await expectDBusError { try await connection.signals(matching: MatchRule()) }
            #expect(subscribe?.code == .disconnected)
            // Timers go on between buses: the loop is the same.
            try await connection.sleep(for: .milliseconds(30))

            try bus.restart()
            #expect(try await eventually { connection.isConnected })
            #expect(reopened.withLock { $0 } == [connection.uniqueName])
            #expect(connection.uniqueName.rawValue.hasPrefix(":"))
            _ = before
            #expect(ObjectIdentifier(connection.executor) == executor)
            let names = try await connection.listNames()
            #expect(names.contains(connection.uniqueName.rawValue))
            // Subscriptions work again once made again.
            let again = SignalReader(try await connection.signals(matching: MatchRule(interface: .bus)))
            let other = try await bus.connect()
            other.close()
            #expect(await again.next() != nil, "NameOwnerChanged for the other connection")
            #expect(connection.counters.outstanding == 0)
        }
    }

    @Test func withoutTheOptionItClosesForGood() async throws {
        try await withTestBus { bus in
            let connection = try await bus.connect(options: testOptions)
            bus.crash()
            #expect(try await eventually { connection.isClosed })
            try bus.restart()
            let later = await expectDBusError { try await connection.listNames() }
            #expect(later?.code == .disconnected)
        }
    }

    @Test func anAddressKeepsAllButItsGUID() {
        let bus = Connection.Bus.address("unix:path=/tmp/x/socket,guid=0123;tcp:host=h,port=1,guid=9")
        #expect(bus.reopening == .address("unix:path=/tmp/x/socket;tcp:host=h,port=1"))
        #expect(Connection.Bus.system.reopening == .system)
    }
}
