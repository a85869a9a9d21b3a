import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// A call to a method answered lately is decoded with the names it was resolved under (and the
/// caller's name reused while it is the same), and a deferred answer is built straight from the
/// call libdbus received: what reaches each caller must still be its own.
@Suite struct DirectAnswerTests {
    static let path = ResolvedMethodsTests.fixed { try ObjectPath("/org/example/direct") }
    static let interface = ResolvedMethodsTests.fixed { try InterfaceName("org.example.Direct") }
    static let wellKnown = ResolvedMethodsTests.fixed { try BusName("org.example.Direct") }
    static let whoAsked = ResolvedMethodsTests.fixed { try MemberName("WhoAsked") }
    static let later = ResolvedMethodsTests.fixed { try MemberName("Later") }
    static let wrongType = ResolvedMethodsTests.fixed { try MemberName("WrongType") }
    static let replayed = ResolvedMethodsTests.fixed { try MemberName("Replayed") }

    /// Deferred methods: the caller's and the called name; the bytes sent, answered from
    /// another task; and an answer that is not the declared `ay`.
    static func methods() throws -> ExportedInterface {
        ExportedInterface(
            interface,
            methods: [
                .deferred(whoAsked, out: try Signature("ss")) { call, reply in
                    reply.succeed([.string(call.sender?.rawValue ?? ""), .string(call.destination?.rawValue ?? "")])
                },
                .deferred(later, in: try Signature("ay"), out: try Signature("ay")) { call, reply in
                    let body = call.body
                    Task.detached {
                        try? await Task.sleep(for: .milliseconds(2))
                        reply.succeed(body)
                    }
                },
                .deferred(wrongType, out: try Signature("ay")) { _, reply in reply.succeed([.string("not bytes")]) },
                // The call as the reply object gives it back, not as the handler received it.
                .deferred(replayed, in: try Signature("s"), out: try Signature("sss")) { _, reply in
                    let call = reply.message
                    reply.succeed(
                        call.body + [.string(call.member?.rawValue ?? ""), .string(call.sender?.rawValue ?? "")])
                },
            ])
    }

    static func call(
        _ member: MemberName, from client: Connection, to destination: BusName, _ arguments: [DBusValue] = []
    ) async throws -> DBusMessage {
        try await client.call(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments)
    }

    @Test func callersTakingTurnsEachGetTheirOwnNames() async throws {
        try await withConnections(3) { _, connections in
            let service = connections[0]
            try service.export([try Self.methods()], at: Self.path)
            _ = try await service.requestName(Self.wellKnown)
            for round in 0..<4 {
                for client in connections.dropFirst() {
                    let destination = round < 2 ? service.uniqueName : Self.wellKnown
                    let reply = try await Self.call(Self.whoAsked, from: client, to: destination)
                    #expect(try reply.argument(0, as: String.self) == client.uniqueName.rawValue)
                    #expect(try reply.argument(1, as: String.self) == destination.rawValue)
                }
            }
        }
    }

    @Test func answersGivenLaterFromOtherTasksReachTheirCallers() async throws {
        try await withConnections(3) { _, connections in
            let service = connections[0]
            try service.export([try Self.methods()], at: Self.path)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, client) in connections.dropFirst().enumerated() {
                    group.addTask {
                        for round in 0..<20 {
                            let sent = Data([UInt8(index), UInt8(round)])
                            let reply = try await Self.call(
                                Self.later, from: client, to: service.uniqueName, [.bytes(sent)])
                            #expect(reply.body == [.bytes(sent)])
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test func theReplyGivesBackTheCallItAnswers() async throws {
        try await withServiceAndClient { _, service, client in
            try service.export([try Self.methods()], at: Self.path)
            for text in ["first", "second"] {
                let reply = try await Self.call(Self.replayed, from: client, to: service.uniqueName, [.string(text)])
                #expect(reply.body == [.string(text), .string("Replayed"), .string(client.uniqueName.rawValue)])
            }
        }
    }

    @Test func anAnswerOfTheWrongTypeIsRefusedEveryTime() async throws {
        try await withServiceAndClient { _, service, client in
            try service.export([try Self.methods()], at: Self.path)
            // The second call resolves from the cache and is answered on the direct path.
            for _ in 0..<2 {
                let error = await #expect(throws: DBusError.self) {
                    try await Self.call(Self.wrongType, from: client, to: service.uniqueName)
                }
                #expect(error?.name == DBusError.StandardName.failed)
                #expect(error?.message.contains("(s) where (ay) was declared") == true)
            }
        }
    }
}
