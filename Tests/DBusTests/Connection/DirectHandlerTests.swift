import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// Methods exported with a ``ExportedMethod/Handler/direct(_:)`` handler, which sees the call as
/// received and returns its answer. Each test calls more than once: the first call is resolved
/// against the table (and decoded), the later ones are answered from the resolution cache
/// without decoding; both must answer alike.
@Suite struct DirectHandlerTests {
    static let path = ResolvedMethodsTests.fixed { try ObjectPath("/org/example/direct/handler") }
    static let interface = ResolvedMethodsTests.fixed { try InterfaceName("org.example.DirectHandler") }
    static let read = ResolvedMethodsTests.fixed { try MemberName("Read") }
    static let whoAsked = ResolvedMethodsTests.fixed { try MemberName("WhoAsked") }
    static let refuse = ResolvedMethodsTests.fixed { try MemberName("Refuse") }
    static let later = ResolvedMethodsTests.fixed { try MemberName("Later") }
    static let wrongType = ResolvedMethodsTests.fixed { try MemberName("WrongType") }
    static let dropped = ResolvedMethodsTests.fixed { try MemberName("Dropped") }
    static let stored = Data([0x10, 0x20, 0x30])

    /// `Read(a{sv}) → ay` announces `Value` and answers with it from `offset`, like a GATT
    /// read; the others answer with their caller, an error, later, the wrong type, or never.
    static func methods(on service: Connection, acceptedSender: BusName? = nil) throws -> ExportedInterface {
        weak let service = service
        return ExportedInterface(
            interface,
            methods: [
                .direct(read, in: try Signature("a{sv}"), out: try Signature("ay")) { call in
                    var offset = 0
                    if !call.firstArgumentIsEmpty {
                        guard case .dictionary(_, _, let entries)? = try? call.arguments().first else {
                            return .error(DBusError.reply("org.example.Error.Odd", "no options"))
                        }
                        for entry in entries where entry.key == .string("offset") {
                            if case .variant(.uint16(let value)) = entry.value { offset = Int(value) }
                        }
                    }
                    try? service?.setProperty("Value", to: .bytes(stored), interface: interface, path: call.path)
                    return .value(.bytes(stored.dropFirst(offset)))
                },
                .direct(whoAsked, out: try Signature("so")) { call in
                    guard let message = try? call.message else { return .error(DBusError.reply("x.Y", "undecodable")) }
                    return .values([.string(message.sender?.rawValue ?? ""), .objectPath(call.path)])
                },
                .direct(refuse) { _ in .error(DBusError.reply("org.example.Error.Refused", "not today")) },
                .direct(later, in: try Signature("ay"), out: try Signature("ay")) { call in
                    let reply = call.answerLater()
                    let arguments = (try? call.arguments()) ?? []
                    Task.detached {
                        try? await Task.sleep(for: .milliseconds(2))
                        reply.succeed(arguments)
                    }
                    return .later(reply)
                },
                .direct(wrongType, out: try Signature("ay")) { _ in .value(.string("not bytes")) },
                .direct(dropped) { call in .later(call.answerLater()) },
            ],
            properties: [ExportedProperty("Value", value: .bytes(Data()))],
            acceptedSender: acceptedSender)
    }

    static func call(
        _ member: MemberName, from client: Connection, to service: Connection, _ arguments: [DBusValue] = []
    ) async throws -> DBusMessage {
        try await client.call(
            destination: service.uniqueName, path: path, interface: interface, member: member, arguments: arguments)
    }

    static let noOptions = DBusValue.dictionary(key: .string, value: .variant, [])
    static func options(offset: UInt16) -> DBusValue {
        .dictionary(key: .string, value: .variant, [DBusDictionaryEntry(.string("offset"), .variant(.uint16(offset)))])
    }

    @Test func theValueIsAnnouncedBeforeTheReplyThatCarriesIt() async throws {
        try await withConnections(2) { bus, connections in
            let (service, client) = (connections[0], connections[1])
            try service.export([try Self.methods(on: service)], at: Self.path)
            let monitor = try BusMonitor(bus: .address(bus.address))
            defer { monitor.stop() }
            var serials: [UInt32] = []
            for round in 0..<3 {
                let reply = try await Self.call(Self.read, from: client, to: service, [Self.noOptions])
                #expect(reply.body == [.bytes(Self.stored)], "round \(round)")
                serials.append(reply.replySerial)
            }
            let seen = try await Self.waitFor(monitor) { messages in
                messages.filter { $0.kind == .methodReturn && $0.sender == service.uniqueName }.count == 3
            }
            for serial in serials {
                let reply = try #require(seen.firstIndex { $0.kind == .methodReturn && $0.replySerial == serial })
                let signal = try #require(seen[..<reply].lastIndex { $0.member?.rawValue == "PropertiesChanged" })
                #expect(seen[signal].path == Self.path)
                #expect(!seen[(signal + 1)..<reply].contains { $0.sender == service.uniqueName })
            }
        }
    }

    @Test func optionsThatAreNotEmptyAreDecoded() async throws {
        try await withServiceAndClient { _, service, client in
            try service.export([try Self.methods(on: service)], at: Self.path)
            for offset: UInt16 in [1, 2, 1] {
                let reply = try await Self.call(Self.read, from: client, to: service, [Self.options(offset: offset)])
                #expect(reply.body == [.bytes(Self.stored.dropFirst(Int(offset)))])
            }
            let reply = try await Self.call(Self.read, from: client, to: service, [Self.noOptions])
            #expect(reply.body == [.bytes(Self.stored)])
        }
    }

    @Test func severalValuesAndTheDecodedCallReachTheirCaller() async throws {
        try await withConnections(3) { _, connections in
            let service = connections[0]
            try service.export([try Self.methods(on: service)], at: Self.path)
            for _ in 0..<2 {
                for client in connections.dropFirst() {
                    let reply = try await Self.call(Self.whoAsked, from: client, to: service)
                    #expect(reply.body == [.string(client.uniqueName.rawValue), .objectPath(Self.path)])
                }
            }
        }
    }

    @Test func anErrorKeepsItsName() async throws {
        try await withServiceAndClient { _, service, client in
            try service.export([try Self.methods(on: service)], at: Self.path)
            for _ in 0..<2 {
                let error = await expectDBusError { try await Self.call(Self.refuse, from: client, to: service) }
                #expect(error?.name == "org.example.Error.Refused")
                #expect(error?.message == "not today")
            }
        }
    }

    @Test func answersGivenLaterReachTheirCallers() async throws {
        try await withConnections(3) { _, connections in
            let service = connections[0]
            try service.export([try Self.methods(on: service)], at: Self.path)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, client) in connections.dropFirst().enumerated() {
                    group.addTask {
                        for round in 0..<10 {
                            let sent = Data([UInt8(index), UInt8(round)])
                            let reply = try await Self.call(Self.later, from: client, to: service, [.bytes(sent)])
                            #expect(reply.body == [.bytes(sent)])
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test func anAnswerOfTheWrongTypeIsRefused() async throws {
        try await withServiceAndClient { _, service, client in
            try service.export([try Self.methods(on: service)], at: Self.path)
            for _ in 0..<2 {
                let error = await expectDBusError { try await Self.call(Self.wrongType, from: client, to: service) }
                #expect(error?.name == DBusError.StandardName.failed)
                #expect(error?.message.contains("(s) where (ay) was declared") == true)
            }
        }
    }

    @Test func aReplyDroppedUnansweredSendsNoReply() async throws {
        try await withServiceAndClient { _, service, client in
            try service.export([try Self.methods(on: service)], at: Self.path)
            for _ in 0..<2 {
                let error = await expectDBusError { try await Self.call(Self.dropped, from: client, to: service) }
                #expect(error?.name == DBusError.StandardName.noReply)
            }
        }
    }

    @Test func aCallExpectingNoReplyIsAnsweredWithNothing() async throws {
        try await withServiceAndClient { _, service, client in
            try service.export([try Self.methods(on: service)], at: Self.path)
            for _ in 0..<2 {
                try client.send(
                    DBusMessage(
                        kind: .methodCall, path: Self.path, interface: Self.interface, member: Self.read,
                        destination: service.uniqueName, noReplyExpected: true, body: [Self.noOptions]))
            }
            // Answered in order: the property was set by the calls above.
            let reply = try await Self.call(Self.read, from: client, to: service, [Self.noOptions])
            #expect(reply.body == [.bytes(Self.stored)])
            #expect(client.counters.repliesIgnoredCount == 0)
        }
    }

    /// Behind an accepted sender the call is answered once the caller is known, from the
    /// decoded call (the received one is gone by then): the same answers.
    @Test func behindAnAcceptedSenderTheAnswersAreTheSame() async throws {
        try await withConnections(3) { _, connections in
            let (service, trusted, rogue) = (connections[0], connections[1], connections[2])
            try service.export([try Self.methods(on: service, acceptedSender: trusted.uniqueName)], at: Self.path)
            for _ in 0..<2 {
                let value = try await Self.call(Self.read, from: trusted, to: service, [Self.options(offset: 2)])
                #expect(value.body == [.bytes(Self.stored.dropFirst(2))])
                let empty = try await Self.call(Self.read, from: trusted, to: service, [Self.noOptions])
                #expect(empty.body == [.bytes(Self.stored)])
                let echoed = try await Self.call(Self.later, from: trusted, to: service, [.bytes(Data([7]))])
                #expect(echoed.body == [.bytes(Data([7]))])
                let caller = try await Self.call(Self.whoAsked, from: trusted, to: service)
                #expect(caller.body.first == .string(trusted.uniqueName.rawValue))
                let refused = await expectDBusError { try await Self.call(Self.refuse, from: trusted, to: service) }
                #expect(refused?.name == "org.example.Error.Refused")
                let denied = await expectDBusError {
                    try await Self.call(Self.read, from: rogue, to: service, [Self.noOptions])
                }
                #expect(denied?.name == DBusError.StandardName.accessDenied)
            }
        }
    }

    private static func waitFor(
        _ monitor: BusMonitor, _ condition: @escaping @Sendable ([DBusMessage]) -> Bool
    ) async throws -> [DBusMessage] {
        let clock = ContinuousClock()
        let deadline = clock.now + eventDeadline
        while clock.now < deadline {
            let messages = monitor.messages
            if condition(messages) { return messages }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw DeadlineExceeded(what: "the monitored messages")
    }
}
