import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// Values and messages that cannot be sent are refused with typed errors, never by libdbus
/// aborting the process or the bus dropping the connection; the connection stays usable.
@Suite struct MalformedInputTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let label: String
        let arguments: [DBusValue]
        let code: DBusError.Code
        var testDescription: String { label }

        init(_ label: String, _ arguments: [DBusValue], _ code: DBusError.Code = .invalidValue) {
            self.label = label
            self.arguments = arguments
            self.code = code
        }
    }

    static func nested(_ depth: Int, _ wrap: (DBusValue) -> DBusValue) -> DBusValue {
        var value = DBusValue.int32(1)
        for _ in 0..<depth { value = wrap(value) }
        return value
    }

    static func nestedArrayType(_ depth: Int) -> DBusType {
        var type = DBusType.int32
        for _ in 0..<depth { type = .array(type) }
        return type
    }

    static let cases: [Case] = [
        Case("string with NUL", [.string("a\0b")]),
        Case("string with NUL in a variant", [.variant(.string("\0"))]),
        Case(
            "string with NUL as a dictionary key",
            [.dictionary(key: .string, value: .int32, [DBusDictionaryEntry(.string("\0"), .int32(1))])]),
        Case("array holding another type", [.array(.int32, [.string("x")])]),
        Case("array of bytes spelled as .array", [.array(.byte, [.byte(1)])]),
        Case("empty array of bytes spelled as .array", [.array(.byte, [])]),
        Case("dictionary with a variant key", [.dictionary(key: .variant, value: .int32, [])]),
        Case("dictionary with an array key", [.dictionary(key: .array(.string), value: .int32, [])]),
        Case(
            "dictionary entry of other types",
            [.dictionary(key: .string, value: .int32, [DBusDictionaryEntry(.string("k"), .string("v"))])]),
        Case("empty structure", [.structure([])]),
        Case("empty structure as an element type", [.array(.structure([]), [])]),
        Case("empty structure inside a variant", [.variant(.structure([.structure([])]))]),
        Case("65 nested variants", [nested(65) { .variant($0) }]),
        Case("33 nested structures", [nested(33) { .structure([$0]) }]),
        Case("33 nested arrays", [.array(nestedArrayType(32), [])]),
        Case("33 nested arrays inside a variant", [.variant(.array(nestedArrayType(32), []))]),
        Case("65 containers across variants", [nested(22) { .variant(.structure([.array(.variant, [$0])])) }]),
        Case("structure of 300 fields", [.structure(Array(repeating: .int32(0), count: 300))]),
        Case("300 arguments", Array(repeating: .int32(0), count: 300)),
        Case("byte array over 64 MiB", [.bytes(Data(count: 67_108_865))], .limitExceeded),
    ]

    /// The limits themselves can be sent.
    static let limits: [Case] = [
        Case("64 nested variants", [nested(64) { .variant($0) }]),
        Case("32 nested structures", [nested(32) { .structure([$0]) }]),
        Case("32 nested arrays", [.array(nestedArrayType(31), [])]),
        Case("255 arguments", Array(repeating: .int32(0), count: 255)),
    ]

    private func exportAnything(on service: Connection) throws {
        try service.export(
            [ExportedInterface(TestNames.interface, methods: [.immediate(TestNames.ping) { _ in [] }])],
            at: TestNames.object)
    }

    private func expectStillUsable(_ client: Connection, _ service: Connection) async throws {
        #expect(!client.isClosed)
        try await roundTrip(from: client, to: service)
        #expect(client.counters.outstanding == 0)
    }

    @Test(arguments: cases)
    func refusedInCallsSignalsAndSends(_ testCase: Case) async throws {
        try await withServiceAndClient { _, service, client in
            try exportAnything(on: service)
            let call = await expectDBusError {
                try await client.call(
                    destination: service.uniqueName, path: TestNames.object, interface: nil, member: TestNames.ping,
                    arguments: testCase.arguments)
            }
            #expect(call?.code == testCase.code, "\(String(describing: call))")
            let signal = expectDBusErrorSync {
                try client.emitSignal(
                    path: TestNames.object, interface: TestNames.interface, member: TestNames.ping,
                    arguments: testCase.arguments)
            }
            #expect(signal?.code == testCase.code)
            let send = expectDBusErrorSync {
                try client.send(
                    DBusMessage(
                        kind: .methodCall, path: TestNames.object, member: TestNames.ping,
                        destination: service.uniqueName, noReplyExpected: true, body: testCase.arguments))
            }
            #expect(send?.code == testCase.code)
            try await expectStillUsable(client, service)
        }
    }

    /// A handler's reply that cannot be sent becomes a `Failed` error reply.
    @Test(arguments: cases)
    func refusedInReplies(_ testCase: Case) async throws {
        try await withServiceAndClient { _, service, client in
            let produced = testCase.arguments
            try service.export(
                [ExportedInterface(TestNames.interface, methods: [.immediate(TestNames.ping) { _ in produced }])],
                at: TestNames.object)
            let error = await expectDBusError {
                try await client.call(
                    destination: service.uniqueName, path: TestNames.object, interface: nil, member: TestNames.ping)
            }
            #expect(error?.code == .remote)
            #expect(error?.name == DBusError.StandardName.failed)
            #expect(!service.isClosed)
        }
    }

    @Test(arguments: limits)
    func valuesAtTheLimitsAreSent(_ testCase: Case) async throws {
        try await withServiceAndClient { _, service, client in
            let signature = try Signature(types: testCase.arguments.map(\.type))
            try Echo.export(on: service, signature: signature)
            let reply = try await Echo.call(Echo.immediate, on: service, from: client, testCase.arguments)
            #expect(reply.body == testCase.arguments)
        }
    }

    @Test func closedAndForeignFileDescriptors() async throws {
        try await withServiceAndClient { _, service, client in
            try exportAnything(on: service)
            let (closed, _) = try FileDescriptorPassingTests.makePipe()
            closed.close()
            // A number no descriptor has; taken back below so that nothing closes it.
            let notOpen = FileDescriptor(owning: Int32.max - 1)
            defer { _ = notOpen.take() }
            let values: [DBusValue] = [
                .unixFD(closed), .unixFD(FileDescriptor(owning: -1)), .variant(.unixFD(closed)), .unixFD(notOpen),
                .array(.unixFD, [.unixFD(notOpen)]),
            ]
            for value in values {
                let error = await expectDBusError {
                    try await client.call(
                        destination: service.uniqueName, path: TestNames.object, interface: nil, member: TestNames.ping,
                        arguments: [value])
                }
                #expect(error?.code == .invalidValue)
            }
            try await expectStillUsable(client, service)
        }
    }

    @Test func messagesMissingWhatTheirKindNeeds() async throws {
        try await withServiceAndClient { _, service, client in
            try exportAnything(on: service)
            let badErrorName = expectDBusErrorSync {
                try service.send(
                    DBusMessage(
                        kind: .error, errorName: "not a valid name", destination: client.uniqueName, replySerial: 1))
            }
            #expect(badErrorName?.code == .invalidName)
            let replyWithoutSerial = expectDBusErrorSync {
                try service.send(DBusMessage(kind: .methodReturn, destination: client.uniqueName))
            }
            #expect(replyWithoutSerial?.code == .invalidValue)
            let errorWithoutSerial = expectDBusErrorSync {
                try service.send(
                    DBusMessage(kind: .error, errorName: "org.example.Error.X", destination: client.uniqueName))
            }
            #expect(errorWithoutSerial?.code == .invalidValue)
            let signalWithoutInterface = expectDBusErrorSync {
                try client.send(DBusMessage(kind: .signal, path: TestNames.object, member: TestNames.ping))
            }
            #expect(signalWithoutInterface?.code == .invalidValue)
            let callWithoutPath = expectDBusErrorSync {
                try client.send(
                    DBusMessage(
                        kind: .methodCall, member: TestNames.ping, destination: service.uniqueName,
                        noReplyExpected: true))
            }
            #expect(callWithoutPath?.code == .invalidValue)
            let callExpectingAReply = expectDBusErrorSync {
                try client.send(
                    DBusMessage(
                        kind: .methodCall, path: TestNames.object, member: TestNames.ping,
                        destination: service.uniqueName))
            }
            #expect(callExpectingAReply?.code == .invalidValue)
            let signalAsCall = await expectDBusError {
                try await client.call(
                    DBusMessage(
                        kind: .signal, path: TestNames.object, interface: TestNames.interface, member: TestNames.ping))
            }
            #expect(signalAsCall?.code == .invalidValue)
            try await expectStillUsable(client, service)
            #expect(!service.isClosed)
        }
    }

    /// `org.freedesktop.DBus.Local` is libdbus's own: the bus drops a connection that sends it.
    @Test func theReservedLocalInterfaceAndPath() async throws {
        try await withServiceAndClient { _, service, client in
            try exportAnything(on: service)
            let local = try interface("org.freedesktop.DBus.Local")
            let localPath = try path("/org/freedesktop/DBus/Local")
            let signal = expectDBusErrorSync {
                try client.emitSignal(path: TestNames.object, interface: local, member: try member("Disconnected"))
            }
            #expect(signal?.code == .invalidValue)
            let signalPath = expectDBusErrorSync {
                try client.emitSignal(path: localPath, interface: TestNames.interface, member: TestNames.ping)
            }
            #expect(signalPath?.code == .invalidValue)
            let call = await expectDBusError {
                try await client.call(
                    destination: service.uniqueName, path: localPath, interface: nil, member: TestNames.ping)
            }
            #expect(call?.code == .invalidValue)
            try await expectStillUsable(client, service)
        }
    }

    @Test func invalidNamesAreRefusedByEveryInitializer() async throws {
        try await withConnections(1) { _, connections in
            let failures: [DBusError?] = [
                expectDBusErrorSync { try BusName("") },
                expectDBusErrorSync { try BusName("no-dots") },
                expectDBusErrorSync { try BusName("org.1digit") },
                expectDBusErrorSync { try ObjectPath("relative/path") },
                expectDBusErrorSync { try ObjectPath("/trailing/") },
                expectDBusErrorSync { try ObjectPath("/a//b") },
                expectDBusErrorSync { try ObjectPath("/with-dash") },
                expectDBusErrorSync { try ObjectPath.root.appending("a/b") },
                expectDBusErrorSync { try ObjectPath.root.appending("") },
                expectDBusErrorSync { try InterfaceName("single") },
                expectDBusErrorSync { try InterfaceName("org.example.1st") },
                expectDBusErrorSync { try MemberName("Has.Dot") },
                expectDBusErrorSync { try MemberName("") },
                expectDBusErrorSync { try ErrorName("org") },
                expectDBusErrorSync { try ErrorName("org.example.Error\0") },
                expectDBusErrorSync { try Signature("a{vs}") },
                expectDBusErrorSync { try Signature("(") },
                expectDBusErrorSync { try Signature("z") },
                expectDBusErrorSync { try Signature(types: [.structure([])]) },
                expectDBusErrorSync { try Signature(types: [.dictionary(key: .variant, value: .string)]) },
            ]
            for failure in failures { #expect(failure?.code == .invalidName, "\(String(describing: failure))") }
            #expect(!connections[0].isClosed)
        }
    }

    @Test func invalidMatchRulesAndExports() async throws {
        try await withServiceAndClient { _, service, client in
            try exportAnything(on: service)
            let rules = [
                MatchRule(path: TestNames.object, pathNamespace: TestNames.object),
                MatchRule(arguments: [64: "x"]),
                MatchRule(arguments: [-1: "x"]),
                MatchRule(arguments: [0: "a\0b"]),
            ]
            for rule in rules {
                let error = await expectDBusError { try await client.signals(matching: rule) }
                #expect(error?.code == .invalidValue, "\(rule)")
            }
            let empty = await expectDBusError { try await client.signals(matchingAny: []) }
            #expect(empty?.code == .invalidValue)
            let badProperty = expectDBusErrorSync {
                try service.export(
                    [
                        ExportedInterface(
                            TestNames.interface, properties: [ExportedProperty("Bad", value: .string("\0"))])
                    ],
                    at: try path("/bad"))
            }
            #expect(badProperty?.code == .invalidValue)
            #expect(!service.isExported(try path("/bad")))
            // A rule with quotes is escaped, not broken.
            let quoted = SignalReader(
                try await client.signals(matching: MatchRule(interface: TestNames.interface, arguments: [0: "it's"])))
            try service.emitSignal(
                path: TestNames.object, interface: TestNames.interface, member: TestNames.ping,
                arguments: [.string("it's")])
            #expect(try await quoted.next()?.argument(0, as: String.self) == "it's")
            try await expectStillUsable(client, service)
        }
    }
}
