import DBus
import DBusTestSupport
import Testing

/// A subscription whose rules name a well-known sender waits until the owner of that name is
/// known; rules that name the same sender share one question to the bus.
@Suite struct OwnerQueryTests {
    @Test("rules naming one well-known sender ask the bus for its owner once; its signals arrive")
    func oneQuestionPerName() async throws {
        try await withConnections(2) { bus, connections in
            let (owner, listener) = (connections[0], connections[1])
            let name = try busName("org.example.Announcer")
            try await owner.requestName(name)
            let monitor = try BusMonitor(bus: .address(bus.address))
            defer { monitor.stop() }
            let members = try (0..<4).map { try MemberName("Beat\($0)") }
            let rules = members.map { MatchRule(sender: name, interface: TestNames.interface, member: $0) }
            let reader = SignalReader(try await listener.signals(matchingAny: rules))
            // The subscription returned after every question it asked was answered; a question
            // about another name after it marks where the monitor has caught up.
            #expect(try await listener.nameOwner(of: owner.uniqueName) == owner.uniqueName)
            func questions(about asked: BusName) -> Int {
                monitor.messages.filter { message in
                    message.kind == .methodCall && message.sender == listener.uniqueName
                        && message.member?.rawValue == "GetNameOwner" && message.body == [.string(asked.rawValue)]
                }.count
            }
            #expect(try await eventually { questions(about: owner.uniqueName) == 1 })
            #expect(questions(about: name) == 1)

            try owner.emitSignal(
                path: TestNames.object, interface: TestNames.interface, member: members[2],
                arguments: [.string("from the owner")])
            let message = try #require(await reader.next())
            #expect(message.member == members[2])
            #expect(try message.argument(0, as: String.self) == "from the owner")
        }
    }
}
