import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// Error replies: the ones handlers send, and the ones the connection and the bus send for
/// calls that cannot be answered.
@Suite struct ErrorReplyTests {
    private struct PlainError: Error, CustomStringConvertible {
        var description: String { "plain failure 42" }
    }

    /// Exports methods that fail in every way a handler can.
    private func exportFailures(on service: Connection) throws {
        let nope = DBusError.reply("org.example.Error.Nope", "text of the error")
        try service.export(
            [
                ExportedInterface(
                    TestNames.interface,
                    methods: [
                        .immediate(try member("Nope")) { _ in throw nope },
                        ExportedMethod(try member("NopeAsync")) { _ in throw nope },
                        .immediate(try member("Plain")) { _ in throw PlainError() },
                        ExportedMethod(try member("PlainAsync")) { _ in throw PlainError() },
                        .immediate(try member("Local")) { _ in throw DBusError(.invalidValue, message: "local kind") },
                        .immediate(try member("BadName")) { _ in throw DBusError.reply("not a valid name", "bad") },
                        .immediate(try member("WrongOut"), out: try signature("s")) { _ in [.int32(1)] },
                        ExportedMethod(try member("WrongOutAsync"), out: try signature("s")) { _ in [] },
                        .immediate(try member("Unsendable"), out: try signature("s")) { _ in [.string("a\0b")] },
                        .immediate(try member("TakesInt"), in: try signature("i")) { _ in [] },
                        .immediate(TestNames.ping) { _ in [] },
                    ])
            ], at: TestNames.object)
    }

    private func failure(
        _ client: Connection, _ service: Connection, _ member: MemberName, path: ObjectPath = TestNames.object,
        interface: InterfaceName? = TestNames.interface, arguments: [DBusValue] = []
    ) async -> DBusError? {
        await expectDBusError {
            try await client.call(
                destination: service.uniqueName, path: path, interface: interface, member: member,
                arguments: arguments)
        }
    }

    @Test func handlerErrorsKeepNameAndMessage() async throws {
        try await withServiceAndClient { _, service, client in
            try exportFailures(on: service)
            for method in ["Nope", "NopeAsync"] {
                let error = await failure(client, service, try member(method))
                #expect(error?.code == .remote)
                #expect(error?.name == "org.example.Error.Nope")
                #expect(error?.message == "text of the error")
            }
        }
    }

    @Test func otherErrorsBecomeFailed() async throws {
        try await withServiceAndClient { _, service, client in
            try exportFailures(on: service)
            for method in ["Plain", "PlainAsync"] {
                let error = await failure(client, service, try member(method))
                #expect(error?.code == .remote)
                #expect(error?.name == DBusError.StandardName.failed)
                #expect(error?.message.contains("plain failure 42") == true, "\(String(describing: error))")
            }
            let local = await failure(client, service, try member("Local"))
            #expect(local?.name == DBusError.StandardName.failed)
            #expect(local?.message == "local kind")
            let badName = await failure(client, service, try member("BadName"))
            #expect(badName?.name == DBusError.StandardName.failed, "an invalid error name cannot be sent")
        }
    }

    @Test func unknownObjectInterfaceAndMethod() async throws {
        try await withServiceAndClient { _, service, client in
            try exportFailures(on: service)
            let object = await failure(client, service, TestNames.ping, path: try path("/no/such/object"))
            #expect(object?.code == .remote)
            #expect(object?.name == DBusError.StandardName.unknownObject)
            let interface = await failure(
                client, service, TestNames.ping, interface: try interface("org.example.Nothing"))
            #expect(interface?.name == DBusError.StandardName.unknownInterface)
            let method = await failure(client, service, try member("NoSuchMethod"))
            #expect(method?.name == DBusError.StandardName.unknownMethod)
            let withoutInterface = await failure(client, service, try member("NoSuchMethod"), interface: nil)
            #expect(withoutInterface?.name == DBusError.StandardName.unknownMethod)
            // The method is found without an interface too.
            _ = try await client.call(
                destination: service.uniqueName, path: TestNames.object, interface: nil, member: TestNames.ping)
        }
    }

    @Test func wrongArgumentsAreInvalidArgs() async throws {
        try await withServiceAndClient { _, service, client in
            try exportFailures(on: service)
            for arguments: [DBusValue] in [
                [], [.string("1")], [.int32(1), .int32(2)], [.int64(1)], [.variant(.int32(1))],
            ] {
                let error = await failure(client, service, try member("TakesInt"), arguments: arguments)
                #expect(error?.code == .remote)
                #expect(error?.name == DBusError.StandardName.invalidArgs, "\(arguments)")
            }
            _ = try await client.call(
                destination: service.uniqueName, path: TestNames.object, interface: TestNames.interface,
                member: try member("TakesInt"), arguments: [.int32(1)])
        }
    }

    @Test func wrongResultsAreFailed() async throws {
        try await withServiceAndClient { _, service, client in
            try exportFailures(on: service)
            for method in ["WrongOut", "WrongOutAsync", "Unsendable"] {
                let error = await failure(client, service, try member(method))
                #expect(error?.code == .remote)
                #expect(error?.name == DBusError.StandardName.failed, "\(method)")
            }
        }
    }

    @Test func callingANameNobodyOwnsIsServiceUnknown() async throws {
        try await withConnections(1) { _, connections in
            let client = connections[0]
            let error = await expectDBusError {
                try await client.call(
                    destination: try BusName("org.example.Nobody"), path: TestNames.object,
                    interface: TestNames.interface, member: TestNames.ping)
            }
            #expect(error?.code == .remote)
            #expect(error?.name == DBusError.StandardName.serviceUnknown)
            // A unique name that is not connected (any more) is unknown as well.
            let gone = await expectDBusError {
                try await client.call(
                    destination: try BusName(":1.9999"), path: TestNames.object, interface: TestNames.interface,
                    member: TestNames.ping)
            }
            #expect(gone?.name == DBusError.StandardName.serviceUnknown)
            #expect(client.counters.outstanding == 0)
        }
    }

    /// The bus's own errors arrive as remote errors too.
    @Test func busDriverErrors() async throws {
        try await withConnections(1) { _, connections in
            let error = await expectDBusError {
                try await connections[0].call(
                    destination: .bus, path: try path("/org/freedesktop/DBus"), interface: .bus,
                    member: try member("NoSuchDriverMethod"))
            }
            #expect(error?.code == .remote)
            #expect(error?.name == DBusError.StandardName.unknownMethod)
        }
    }
}
