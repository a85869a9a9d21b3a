import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// Opening and closing connections.
@Suite struct ConnectionLifecycleTests {
    @Test(arguments: ["unix:path=/nonexistent/swift-ble/socket", "nonsense", "tcp:host=localhost,port=1"])
    func connectingToABadAddressFails(address: String) async throws {
        try await withTestBus { _ in
            let error = await expectDBusError { try await Connection(bus: .address(address), options: testOptions) }
            #expect(error?.code == .connectionFailed)
        }
    }

    @Test func connectingToAStoppedBusFails() async throws {
        try await withTestBus { bus in
            bus.stop()
            let error = await expectDBusError { try await bus.connect(options: testOptions) }
            #expect(error?.code == .connectionFailed)
        }
    }

    @Test func closeIsIdempotentAndFinal() async throws {
        try await withConnections(2) { _, connections in
            let (connection, other) = (connections[0], connections[1])
            try exportPing(on: other)
            try await roundTrip(from: connection, to: other)
            let departure = SignalReader(try await other.nameOwnerChanges(of: connection.uniqueName).subscription)
            #expect(!connection.isClosed)
            connection.close()
            connection.close()
            #expect(connection.isClosed)
            let error = await expectDBusError { try await roundTrip(from: connection, to: other) }
            #expect(error?.code == .disconnected)
            #expect(connection.counters.outstanding == 0)
            // The bus saw it go.
            let change = try #require(await departure.next())
            #expect(try change.argument(0, as: String.self) == connection.uniqueName.rawValue)
            #expect(try change.argument(2, as: String.self) == "")
            #expect(try await other.nameOwner(of: connection.uniqueName) == nil)
        }
    }

    /// A connection dropped without `close()` closes itself, without hanging anything.
    @Test func droppingAnUnusedConnectionClosesIt() async throws {
        try await withConnections(1) { bus, connections in
            let watcher = connections[0]
            let changes = SignalReader(
                try await watcher.signals(
                    matching: MatchRule(sender: .bus, interface: .bus, member: try member("NameOwnerChanged"))))
            let name = try await connectAndDrop(bus)
            while let change = await changes.next() {
                guard (try? change.argument(0, as: String.self)) == name.rawValue,
                    (try? change.argument(2, as: String.self)) == ""
                else { continue }
                return
            }
            Issue.record("\(name) did not leave the bus")
        }
    }

    private func connectAndDrop(_ bus: TestBus) async throws -> BusName {
        let connection = try await bus.connect(options: testOptions)
        return connection.uniqueName
    }

    @Test func manyConnectionsAtOnce() async throws {
        try await withTestBus { bus in
            let connections = try await withThrowingTaskGroup(of: Connection.self) { group in
                for _ in 0..<20 { group.addTask { try await bus.connect(options: testOptions) } }
                return try await group.reduce(into: [Connection]()) { $0.append($1) }
            }
            defer { for connection in connections { connection.close() } }
            #expect(Set(connections.map(\.uniqueName)).count == 20)
            #expect(connections.allSatisfy { $0.uniqueName.isUnique })
            let names = try await connections[0].listNames()
            for connection in connections { #expect(names.contains(connection.uniqueName.rawValue)) }
        }
    }
}
