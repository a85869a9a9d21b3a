import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// Calls flagged `NO_REPLY_EXPECTED` run their handler and get no reply.
@Suite struct NoReplyExpectedTests {
    static let record = fixedMember("Record")
    static let recordAsync = fixedMember("RecordAsync")

    static func fixedMember(_ text: String) -> MemberName {
        do { return try MemberName(text) } catch { preconditionFailure("\(error)") }
    }

    private func exportRecorder(on service: Connection, into log: EventLog<String>) throws {
        try service.export(
            [
                ExportedInterface(
                    TestNames.interface,
                    methods: [
                        .immediate(Self.record, in: try signature("s"), out: try signature("s")) { call in
                            log.record(try call.argument(0))
                            return [.string("recorded")]
                        },
                        ExportedMethod(Self.recordAsync, in: try signature("s"), out: try signature("s")) { call in
                            log.record(try call.argument(0))
                            return [.string("recorded")]
                        },
                        .immediate(TestNames.ping) { _ in [] },
                    ])
            ], at: TestNames.object)
    }

    private func message(_ member: MemberName, _ text: String, to service: Connection, noReply: Bool) -> DBusMessage {
        DBusMessage(
            kind: .methodCall, path: TestNames.object, interface: TestNames.interface, member: member,
            destination: service.uniqueName, noReplyExpected: noReply, body: [.string(text)])
    }

    @Test func handlerRunsAndNoReplyIsSent() async throws {
        try await withServiceAndClient { _, service, client in
            let log = EventLog<String>()
            try exportRecorder(on: service, into: log)
            try client.send(message(Self.record, "first", to: service, noReply: true))
            let reply = try await client.call(message(Self.record, "second", to: service, noReply: false))
            #expect(try reply.argument(0, as: String.self) == "recorded")
            // The calls arrived in order, so the first was handled before the second.
            #expect(log.all == ["first", "second"])
            // The bus passes unrequested replies on, so a reply to the first call would have
            // reached the client before the reply to the second.
            #expect(client.counters.repliesIgnoredCount == 0)
            // And the service would have heard of a refused one by now.
            _ = try await service.listNames()
            #expect(service.counters.repliesIgnoredCount == 0)
            #expect(client.counters.outstanding == 0)
        }
    }

    @Test func asyncHandlerRunsToo() async throws {
        try await withServiceAndClient { _, service, client in
            let log = EventLog<String>()
            try exportRecorder(on: service, into: log)
            try client.send(message(Self.recordAsync, "no reply", to: service, noReply: true))
            #expect(await log.waitFor(1) == ["no reply"])
            _ = try await client.call(message(Self.recordAsync, "with reply", to: service, noReply: false))
            try await roundTrip(from: client, to: service)
            #expect(Set(log.all) == ["no reply", "with reply"])
            #expect(client.counters.repliesIgnoredCount == 0)
        }
    }

    /// The counter the tests above rely on does count a reply nobody asked for.
    @Test func anUnrequestedReplyIsCountedAndDropped() async throws {
        try await withServiceAndClient { _, service, client in
            try exportPing(on: service)
            try service.send(
                DBusMessage(kind: .methodReturn, destination: client.uniqueName, replySerial: 4_242, body: [.int32(1)]))
            try service.send(
                DBusMessage(
                    kind: .error, errorName: "org.example.Error.Stray", destination: client.uniqueName,
                    replySerial: 4_243, body: [.string("stray")]))
            try await roundTrip(from: client, to: service)
            #expect(client.counters.repliesIgnoredCount == 2)
            #expect(client.counters.outstanding == 0)
        }
    }
}
