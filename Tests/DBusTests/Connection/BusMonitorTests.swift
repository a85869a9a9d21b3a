import DBus
import DBusTestSupport
import Foundation
import Testing

/// BusMonitor: the conversation between other connections, in the bus's order, without the
/// monitor disturbing it.
@Suite struct BusMonitorTests {
    @Test("a call, its reply and a signal between two connections are recorded in order")
    func recordsCallReplyAndSignal() async throws {
        try await withConnections(2) { bus, connections in
            // One connection sends both, so their order on the bus is the order they were sent in.
            let (caller, other) = (connections[0], connections[1])
            let monitor = try BusMonitor(bus: .address(bus.address))
            defer { monitor.stop() }
            let member = try MemberName("Tick")
            try caller.emitSignal(
                path: try ObjectPath("/org/example/clock"), interface: try InterfaceName("org.example.Clock"),
                member: member, arguments: [.uint32(7)])
            _ = try await caller.nameOwner(of: other.uniqueName)
            try await waitForMessages(monitor) { messages in
                messages.contains { $0.kind == .methodReturn && $0.destination == caller.uniqueName }
            }
            let seen = monitor.messages
            let signal = try #require(seen.firstIndex { $0.member == member })
            #expect(seen[signal].sender == caller.uniqueName)
            #expect(seen[signal].body == [.uint32(7)])
            let call = try #require(
                seen.firstIndex { message in
                    message.kind == .methodCall && message.sender == caller.uniqueName
                        && message.member?.rawValue == "GetNameOwner"
                })
            let reply = try #require(
                seen.firstIndex { $0.kind == .methodReturn && $0.replySerial == seen[call].serial })
            #expect(signal < call && call < reply)
            #expect(seen[reply].body == [.string(other.uniqueName.rawValue)])
        }
    }

    @Test("the monitored connections keep working, and stop() keeps what was recorded")
    func monitoringDisturbsNothing() async throws {
        try await withConnections(1) { bus, connections in
            let monitor = try BusMonitor(bus: .address(bus.address))
            for _ in 0..<3 { _ = try await connections[0].nameOwner(of: connections[0].uniqueName) }
            try await waitForMessages(monitor) { messages in messages.filter { $0.kind == .methodReturn }.count >= 3 }
            monitor.stop()
            monitor.stop()
            #expect(monitor.messages.filter { $0.kind == .methodReturn }.count >= 3)
            #expect(try await connections[0].nameOwner(of: connections[0].uniqueName) == connections[0].uniqueName)
        }
    }

    @Test("a bus that is not there is a typed error")
    func unreachableBus() {
        #expect(throws: DBusError.self) {
            _ = try BusMonitor(bus: .address("unix:path=/nonexistent/swift-ble-monitor-test"))
        }
    }

    private func waitForMessages(_ monitor: BusMonitor, _ condition: ([DBusMessage]) -> Bool) async throws {
        let deadline = ContinuousClock.now + eventDeadline
        while !condition(monitor.messages) {
            guard ContinuousClock.now < deadline else {
                Issue.record("the monitor did not see the expected messages: \(monitor.messages)")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
