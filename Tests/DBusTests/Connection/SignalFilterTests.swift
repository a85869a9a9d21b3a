import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// Which signals a subscription gets. Each test also keeps a broad subscription on the same
/// connection where it matters, so that the bus sends everything and the connection's own
/// routing must do the filtering.
@Suite struct SignalFilterTests {
    static let note = fixedMember("Note")
    static let hit = fixedMember("Hit")

    static func fixedMember(_ text: String) -> MemberName {
        do { return try MemberName(text) } catch { preconditionFailure("\(error)") }
    }

    private func emitNote(_ text: String, from emitter: Connection) throws {
        try emitter.emitSignal(
            path: TestNames.object, interface: TestNames.interface, member: Self.note, arguments: [.string(text)])
    }

    private func notes(_ messages: [DBusMessage]) -> [String] {
        messages.compactMap { try? $0.argument(0, as: String.self) }
    }

    private var broadRule: MatchRule { MatchRule(interface: TestNames.interface) }

    @Test func senderFilteredByUniqueName() async throws {
        try await withConnections(3) { _, connections in
            let (wanted, other, listener) = (connections[0], connections[1], connections[2])
            try exportPing(on: wanted)
            try exportPing(on: other)
            let filtered = SignalReader(
                try await listener.signals(
                    matching: MatchRule(sender: wanted.uniqueName, interface: TestNames.interface)))
            let broad = SignalReader(try await listener.signals(matching: broadRule))
            try emitNote("w1", from: wanted)
            try emitNote("o1", from: other)
            try emitNote("w2", from: wanted)
            try emitNote("o2", from: other)
            try await roundTrip(from: listener, to: wanted)
            try await roundTrip(from: listener, to: other)
            let got = await filtered.cancelAndDrain()
            #expect(notes(got) == ["w1", "w2"])
            #expect(got.allSatisfy { $0.sender == wanted.uniqueName })
            #expect(Set(notes(await broad.cancelAndDrain())) == ["w1", "o1", "w2", "o2"])
        }
    }

    /// A well-known sender is followed through its owner: signals from a connection that does
    /// not own the name are not delivered; after the name moves, the new owner's are.
    @Test func senderFilteredByWellKnownNameFollowsTheOwner() async throws {
        try await withConnections(3) { _, connections in
            let (first, second, listener) = (connections[0], connections[1], connections[2])
            let name = try busName("org.example.Owned")
            try exportPing(on: first)
            try exportPing(on: second)
            // Subscribed while nobody owns the name.
            let filtered = SignalReader(
                try await listener.signals(matching: MatchRule(sender: name, interface: TestNames.interface)))
            let broad = SignalReader(try await listener.signals(matching: broadRule))

            try emitNote("first-unowned", from: first)
            #expect(try await first.requestName(name) == .primaryOwner)
            try emitNote("first-owner", from: first)
            try emitNote("second-not-owner", from: second)
            try await roundTrip(from: listener, to: first)
            try await roundTrip(from: listener, to: second)

            try await first.releaseName(name)
            #expect(try await second.requestName(name) == .primaryOwner)
            try emitNote("first-not-owner", from: first)
            try emitNote("second-owner", from: second)
            try await roundTrip(from: listener, to: first)
            try await roundTrip(from: listener, to: second)

            #expect(notes(await filtered.cancelAndDrain()) == ["first-owner", "second-owner"])
            #expect(
                Set(notes(await broad.cancelAndDrain()))
                    == ["first-unowned", "first-owner", "second-not-owner", "first-not-owner", "second-owner"])
        }
    }

    /// `path_namespace`, `member` and `arg0` together, checked by the bus alone and by the
    /// connection's routing (with a broad rule beside it).
    @Test(arguments: [false, true])
    func pathNamespaceMemberAndArg0(withBroadRule: Bool) async throws {
        try await withConnections(2) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            try exportPing(on: emitter)
            let namespace = try path("/org/example/ns")
            let rule = MatchRule(
                pathNamespace: namespace, interface: TestNames.interface, member: Self.hit, arguments: [0: "yes"])
            let filtered = SignalReader(try await listener.signals(matching: rule))
            let broad = withBroadRule ? SignalReader(try await listener.signals(matching: MatchRule())) : nil

            let signals:
                [(path: String, interface: InterfaceName, member: MemberName, arguments: [DBusValue], wanted: Bool)] = [
                    ("/org/example/ns/a", TestNames.interface, Self.hit, [.string("yes"), .int32(1)], true),
                    ("/org/example/other", TestNames.interface, Self.hit, [.string("yes"), .int32(-1)], false),
                    ("/org/example/ns", TestNames.interface, Self.hit, [.string("yes"), .int32(2)], true),
                    ("/org/example/nsx", TestNames.interface, Self.hit, [.string("yes"), .int32(-2)], false),
                    ("/org/example/ns/b/c", TestNames.interface, Self.note, [.string("yes"), .int32(-3)], false),
                    ("/org/example/ns/b/c", TestNames.interface, Self.hit, [.string("no"), .int32(-4)], false),
                    (
                        "/org/example/ns/b/c", try interface("org.example.Other"), Self.hit,
                        [.string("yes"), .int32(-5)], false
                    ),
                    ("/org/example/ns/b/c", TestNames.interface, Self.hit, [.int32(-6)], false),
                    ("/org/example/ns/b/c", TestNames.interface, Self.hit, [], false),
                    (
                        "/org/example/ns/b/c", TestNames.interface, Self.hit,
                        [.string("yes"), .int32(3), .string("more")], true
                    ),
                    ("/", TestNames.interface, Self.hit, [.string("yes"), .int32(-7)], false),
                ]
            for signal in signals {
                try emitter.emitSignal(
                    path: try path(signal.path), interface: signal.interface, member: signal.member,
                    arguments: signal.arguments)
            }
            try await roundTrip(from: listener, to: emitter)
            let got = await filtered.cancelAndDrain()
            #expect(got.map { try? $0.argument(1, as: Int32.self) } == [1, 2, 3])
            if let broad { #expect(await broad.cancelAndDrain().count >= signals.count) }
        }
    }

    /// `arg0` matches string arguments only, as the bus does: an object path argument with the
    /// same text is not delivered, whatever other rules the connection has.
    @Test(arguments: [false, true])
    func arg0IgnoresObjectPathArguments(withBroadRule: Bool) async throws {
        try await withConnections(2) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            try exportPing(on: emitter)
            let text = "/org/example/thing"
            let filtered = SignalReader(
                try await listener.signals(matching: MatchRule(interface: TestNames.interface, arguments: [0: text])))
            let broad = withBroadRule ? SignalReader(try await listener.signals(matching: broadRule)) : nil
            try emitter.emitSignal(
                path: TestNames.object, interface: TestNames.interface, member: Self.hit,
                arguments: [.objectPath(try path(text)), .int32(1)])
            try emitter.emitSignal(
                path: TestNames.object, interface: TestNames.interface, member: Self.hit,
                arguments: [.string(text), .int32(2)])
            try await roundTrip(from: listener, to: emitter)
            #expect((await filtered.cancelAndDrain()).map { try? $0.argument(1, as: Int32.self) } == [2])
            if let broad { #expect(await broad.cancelAndDrain().count == 2) }
        }
    }

    /// An exact `path` matches that object only, and a later `argN` than arg0 works too.
    @Test func exactPathAndLaterArgument() async throws {
        try await withConnections(2) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            try exportPing(on: emitter)
            let object = try path("/org/example/exact")
            let filtered = SignalReader(
                try await listener.signals(
                    matching: MatchRule(path: object, interface: TestNames.interface, arguments: [2: "z"])))
            let broad = SignalReader(try await listener.signals(matching: broadRule))
            let cases: [(String, [DBusValue])] = [
                ("/org/example/exact", [.string("a"), .string("b"), .string("z"), .int32(1)]),
                ("/org/example/exact/child", [.string("a"), .string("b"), .string("z"), .int32(-1)]),
                ("/org/example/exact", [.string("a"), .string("b"), .string("y"), .int32(-2)]),
                ("/org/example/exact", [.string("a"), .string("b")]),
                ("/org/example/exact", [.string("z"), .string("z"), .string("z"), .int32(2)]),
            ]
            for (signalPath, arguments) in cases {
                try emitter.emitSignal(
                    path: try path(signalPath), interface: TestNames.interface, member: Self.hit, arguments: arguments)
            }
            try await roundTrip(from: listener, to: emitter)
            #expect((await filtered.cancelAndDrain()).map { try? $0.argument(3, as: Int32.self) } == [1, 2])
            #expect(await broad.cancelAndDrain().count == cases.count)
        }
    }

    /// One subscription for several rules delivers each matching signal once, in bus order.
    @Test func oneSubscriptionForSeveralRules() async throws {
        try await withConnections(2) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            try exportPing(on: emitter)
            let reader = SignalReader(
                try await listener.signals(matchingAny: [
                    MatchRule(interface: TestNames.interface, member: Self.note),
                    MatchRule(interface: TestNames.interface, arguments: [0: "both"]),
                ]))
            for text in ["one", "both", "two"] { try emitNote(text, from: emitter) }
            try emitter.emitSignal(
                path: TestNames.object, interface: TestNames.interface, member: Self.hit, arguments: [.string("both")])
            try emitter.emitSignal(
                path: TestNames.object, interface: TestNames.interface, member: Self.hit,
                arguments: [.string("neither")])
            try await roundTrip(from: listener, to: emitter)
            let got = await reader.cancelAndDrain()
            #expect(notes(got) == ["one", "both", "two", "both"])
            #expect(got.map(\.member) == [Self.note, Self.note, Self.note, Self.hit])
        }
    }
}
