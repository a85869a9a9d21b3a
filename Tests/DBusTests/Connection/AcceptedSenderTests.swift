import DBus
import DBusTestSupport
import Testing

/// An interface exported with ``ExportedInterface/acceptedSender`` answers only its caller of
/// choice (as a GATT application answers only bluetoothd): a rogue client on the same bus
/// gets AccessDenied for methods and property writes, and the handler never runs.
@Suite("Accepted senders of exported interfaces", .timeLimit(.minutes(1)))
struct AcceptedSenderTests {
    static let trustedName = "org.example.Trusted"

    /// Exports `Ping` and a writable `Level` that only `accepted` may use; counts handler runs.
    static func exportGuarded(on service: Connection, accepted: BusName, runs: EventLog<BusName?>) throws {
        try service.export(
            [
                ExportedInterface(
                    try interface("org.example.Guarded"),
                    methods: [
                        .immediate(try member("Ping")) { call in
                            runs.record(call.sender)
                            return []
                        }
                    ],
                    properties: [ExportedProperty("Level", value: .int32(1), access: .readwrite)],
                    acceptedSender: accepted)
            ], at: try path("/guarded"))
    }

    static func ping(_ caller: Connection, _ service: Connection) async throws {
        _ = try await caller.call(
            destination: service.uniqueName, path: try path("/guarded"),
            interface: try interface("org.example.Guarded"),
            member: try member("Ping"))
    }

    static func setLevel(_ caller: Connection, _ service: Connection, _ value: Int32) async throws {
        _ = try await caller.call(
            destination: service.uniqueName, path: try path("/guarded"), interface: .properties,
            member: try member("Set"),
            arguments: [.string("org.example.Guarded"), .string("Level"), .variant(.int32(value))])
    }

    @Test(
        "only the owner of the accepted well-known name may call or set; everyone may read",
        arguments: [false, true])
    func wellKnownOwner(serviceFollowsName: Bool) async throws {
        try await withConnections(3) { _, connections in
            let (service, trusted, rogue) = (connections[0], connections[1], connections[2])
            let name = try busName(Self.trustedName)
            try await trusted.requestName(name)
            // With a subscription on the name the owner is known locally; without one the bus is asked.
            let following = serviceFollowsName ? try await service.signals(matching: MatchRule(sender: name)) : nil
            let runs = EventLog<BusName?>()
            try Self.exportGuarded(on: service, accepted: name, runs: runs)

            try await Self.ping(trusted, service)
            let denied = await expectDBusError { try await Self.ping(rogue, service) }
            #expect(denied?.name == DBusError.StandardName.accessDenied)
            #expect(runs.all.map { $0 } == [trusted.uniqueName])

            let setDenied = await expectDBusError { try await Self.setLevel(rogue, service, 7) }
            #expect(setDenied?.name == DBusError.StandardName.accessDenied)
            #expect(
                service.property("Level", interface: try interface("org.example.Guarded"), path: try path("/guarded"))
                    == .int32(1))
            try await Self.setLevel(trusted, service, 5)
            #expect(
                service.property("Level", interface: try interface("org.example.Guarded"), path: try path("/guarded"))
                    == .int32(5))

            let read = try await rogue.call(
                destination: service.uniqueName, path: try path("/guarded"), interface: .properties,
                member: try member("Get"), arguments: [.string("org.example.Guarded"), .string("Level")])
            #expect(read.body.first == .variant(.int32(5)))
            _ = following
        }
    }

    @Test("when the accepted name changes hands, the new owner is accepted and the old one is not")
    func ownerChange() async throws {
        try await withConnections(3) { _, connections in
            let (service, first, second) = (connections[0], connections[1], connections[2])
            let name = try busName(Self.trustedName)
            let following = try await service.signals(matching: MatchRule(sender: name))
            let owners = try await service.nameOwnerChanges(of: name)
            var changes = owners.subscription.makeAsyncIterator()
            let runs = EventLog<BusName?>()
            try Self.exportGuarded(on: service, accepted: name, runs: runs)
            try await first.requestName(name)
            _ = await changes.next()
            try await Self.ping(first, service)
            try await first.releaseName(name)
            try await second.requestName(name)
            // Released, then taken: both changes reached the service before the next calls.
            _ = await changes.next()
            _ = await changes.next()
            try await Self.ping(second, service)
            let denied = await expectDBusError { try await Self.ping(first, service) }
            #expect(denied?.name == DBusError.StandardName.accessDenied)
            #expect(runs.all.map { $0 } == [first.uniqueName, second.uniqueName])
            _ = following
        }
    }

    @Test("a unique accepted name admits exactly that connection, and nobody when the name has no owner")
    func uniqueAndOwnerless() async throws {
        try await withConnections(3) { _, connections in
            let (service, trusted, rogue) = (connections[0], connections[1], connections[2])
            let runs = EventLog<BusName?>()
            try Self.exportGuarded(on: service, accepted: trusted.uniqueName, runs: runs)
            try await Self.ping(trusted, service)
            #expect(
                await expectDBusError { try await Self.ping(rogue, service) }?.name
                    == DBusError.StandardName.accessDenied)

            try Self.exportGuarded(on: service, accepted: try busName("org.example.Nobody"), runs: runs)
            #expect(
                await expectDBusError { try await Self.ping(trusted, service) }?.name
                    == DBusError.StandardName.accessDenied)
            #expect(runs.all.map { $0 } == [trusted.uniqueName])
        }
    }
}
