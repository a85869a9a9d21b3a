import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// `org.freedesktop.DBus.Properties` of exported objects, and `PropertiesChanged`.
@Suite struct PropertiesTests {
    static let interface = fixedInterface("org.example.Props")
    static let object = fixedPath("/org/example/props")
    static let changed = fixedMember("PropertiesChanged")

    static func fixedInterface(_ text: String) -> InterfaceName {
        do { return try InterfaceName(text) } catch { preconditionFailure("\(error)") }
    }
    static func fixedPath(_ text: String) -> ObjectPath {
        do { return try ObjectPath(text) } catch { preconditionFailure("\(error)") }
    }
    static func fixedMember(_ text: String) -> MemberName {
        do { return try MemberName(text) } catch { preconditionFailure("\(error)") }
    }

    /// The exporting side, with a property of every kind.
    struct Service {
        let connection: Connection
        /// Values `Guarded`'s `onSet` accepted, with the sender of each `Set`.
        let accepted = EventLog<(DBusValue, BusName?)>()

        init(_ connection: Connection) throws {
            self.connection = connection
            let accepted = self.accepted
            try connection.export(
                [
                    ExportedInterface(
                        PropertiesTests.interface,
                        properties: [
                            ExportedProperty("Name", value: .string("initial"), access: .readwrite),
                            ExportedProperty("Count", value: .uint32(3)),
                            ExportedProperty("Secret", value: .string("hidden"), access: .write),
                            ExportedProperty("Guarded", value: .int32(0), access: .readwrite) { value, call in
                                if case .int32(let number) = value, number < 0 {
                                    throw DBusError.reply("org.example.Error.Refused", "no negative numbers")
                                }
                                accepted.record((value, call.sender))
                            },
                            ExportedProperty(
                                "Lazy", value: .string("x"), access: .readwrite, changeSignal: .invalidates),
                            ExportedProperty("Quiet", value: .int32(0), access: .readwrite, changeSignal: .none),
                            ExportedProperty("Fixed", value: .string("c"), changeSignal: .constant),
                        ])
                ], at: PropertiesTests.object)
            try exportPing(on: connection)
        }

        func stored(_ name: String) -> DBusValue? {
            connection.property(name, interface: PropertiesTests.interface, path: PropertiesTests.object)
        }
    }

    private func properties(
        _ member: String, _ arguments: [DBusValue], on service: Connection, from client: Connection,
        path: ObjectPath = PropertiesTests.object
    ) async throws -> DBusMessage {
        try await client.call(
            destination: service.uniqueName, path: path, interface: .properties, member: try MemberName(member),
            arguments: arguments)
    }

    private func get(_ name: String, on service: Connection, from client: Connection) async throws -> DBusValue {
        let reply = try await properties(
            "Get", [.string(Self.interface.rawValue), .string(name)], on: service, from: client)
        #expect(reply.signature == "v")
        return try #require(reply.body.first).unwrappingVariant
    }

    private func set(_ name: String, _ value: DBusValue, on service: Connection, from client: Connection) async throws {
        _ = try await properties(
            "Set", [.string(Self.interface.rawValue), .string(name), .variant(value)], on: service, from: client)
    }

    private func changes(of service: Connection, on client: Connection) async throws -> SignalReader {
        SignalReader(
            try await client.signals(
                matching: MatchRule(
                    sender: service.uniqueName, path: Self.object, interface: .properties, member: Self.changed)))
    }

    /// The body of a `PropertiesChanged`: interface, changed values, invalidated names.
    private func decode(_ signal: DBusMessage?) throws -> (String, [String: DBusValue], [String]) {
        let signal = try #require(signal)
        #expect(signal.signature == "sa{sv}as")
        return (try signal.argument(0), try signal.argument(1), try signal.argument(2))
    }

    @Test func getAndGetAll() async throws {
        try await withServiceAndClient { _, connection, client in
            _ = try Service(connection)
            #expect(try await get("Count", on: connection, from: client) == .uint32(3))
            #expect(try await get("Name", on: connection, from: client) == .string("initial"))
            let all = try await properties("GetAll", [.string(Self.interface.rawValue)], on: connection, from: client)
            #expect(all.signature == "a{sv}")
            let values: [String: DBusValue] = try all.argument(0)
            #expect(
                values == [
                    "Name": .string("initial"), "Count": .uint32(3), "Guarded": .int32(0), "Lazy": .string("x"),
                    "Quiet": .int32(0), "Fixed": .string("c"),
                ], "write-only properties are not listed")
        }
    }

    @Test func getErrors() async throws {
        try await withServiceAndClient { _, connection, client in
            _ = try Service(connection)
            let interfaceName = DBusValue.string(Self.interface.rawValue)
            let cases: [(String, [DBusValue], ObjectPath, String)] = [
                ("Get", [interfaceName, .string("Secret")], Self.object, DBusError.StandardName.accessDenied),
                ("Get", [interfaceName, .string("Missing")], Self.object, DBusError.StandardName.unknownProperty),
                (
                    "Get", [.string("org.example.Nothing"), .string("Name")], Self.object,
                    DBusError.StandardName.unknownInterface
                ),
                ("GetAll", [.string("org.example.Nothing")], Self.object, DBusError.StandardName.unknownInterface),
                (
                    "Get", [interfaceName, .string("Name")], try path("/no/object"),
                    DBusError.StandardName.unknownObject
                ),
                ("Get", [interfaceName], Self.object, DBusError.StandardName.invalidArgs),
                (
                    "Set", [interfaceName, .string("Name"), .string("not a variant")], Self.object,
                    DBusError.StandardName.invalidArgs
                ),
                ("Frobnicate", [], Self.object, DBusError.StandardName.unknownMethod),
            ]
            for (member, arguments, objectPath, expected) in cases {
                let error = await expectDBusError {
                    try await properties(member, arguments, on: connection, from: client, path: objectPath)
                }
                #expect(error?.code == .remote)
                #expect(error?.name == expected, "\(member)\(arguments) at \(objectPath)")
            }
        }
    }

    @Test func refusedWritesChangeNothingAndSignalNothing() async throws {
        try await withServiceAndClient { _, connection, client in
            let service = try Service(connection)
            let reader = try await changes(of: connection, on: client)
            let readOnly = await expectDBusError { try await set("Count", .uint32(9), on: connection, from: client) }
            #expect(readOnly?.name == DBusError.StandardName.propertyReadOnly)
            let wrongType = await expectDBusError { try await set("Name", .int32(9), on: connection, from: client) }
            #expect(wrongType?.name == DBusError.StandardName.invalidArgs)
            let unknown = await expectDBusError { try await set("Missing", .int32(9), on: connection, from: client) }
            #expect(unknown?.name == DBusError.StandardName.unknownProperty)
            let refused = await expectDBusError { try await set("Guarded", .int32(-1), on: connection, from: client) }
            #expect(refused?.code == .remote)
            #expect(refused?.name == "org.example.Error.Refused")
            #expect(refused?.message == "no negative numbers")

            #expect(service.stored("Count") == .uint32(3))
            #expect(service.stored("Name") == .string("initial"))
            #expect(service.stored("Guarded") == .int32(0))
            #expect(try await get("Guarded", on: connection, from: client) == .int32(0))
            #expect(service.accepted.all.isEmpty)
            try await roundTrip(from: client, to: connection)
            #expect(await reader.cancelAndDrain().isEmpty, "no PropertiesChanged for refused writes")
        }
    }

    @Test func successfulSetsStoreAndEmitPropertiesChanged() async throws {
        try await withServiceAndClient { _, connection, client in
            let service = try Service(connection)
            let reader = try await changes(of: connection, on: client)

            try await set("Name", .string("renamed"), on: connection, from: client)
            let (interfaceName, changed, invalidated) = try decode(await reader.next())
            #expect(interfaceName == Self.interface.rawValue)
            #expect(changed == ["Name": .string("renamed")])
            #expect(invalidated.isEmpty)
            #expect(service.stored("Name") == .string("renamed"))
            #expect(try await get("Name", on: connection, from: client) == .string("renamed"))

            try await set("Guarded", .int32(5), on: connection, from: client)
            let guarded = try decode(await reader.next())
            #expect(guarded.1 == ["Guarded": .int32(5)])
            #expect(service.accepted.all.map(\.0) == [.int32(5)])
            #expect(service.accepted.all.map(\.1) == [client.uniqueName], "onSet sees the caller")

            // A write-only property can be written.
            try await set("Secret", .string("changed"), on: connection, from: client)
            let secret = try decode(await reader.next())
            #expect(secret.1 == ["Secret": .string("changed")])
            #expect(service.stored("Secret") == .string("changed"))
        }
    }

    @Test func setPropertyEmitsFollowingEachChangeRule() async throws {
        try await withServiceAndClient { _, connection, client in
            let service = try Service(connection)
            let reader = try await changes(of: connection, on: client)
            func store(_ name: String, _ value: DBusValue) throws {
                try connection.setProperty(name, to: value, interface: Self.interface, path: Self.object)
            }
            try store("Name", .string("from the service"))
            try store("Quiet", .int32(1))
            try store("Fixed", .string("d"))
            try store("Lazy", .string("y"))
            try connection.setProperties(
                ["Name": .string("both"), "Count": .uint32(4)], interface: Self.interface, path: Self.object)
            try await roundTrip(from: client, to: connection)

            let signals = try (await reader.cancelAndDrain()).map(decode)
            #expect(signals.count == 3)
            #expect(signals.first?.1 == ["Name": .string("from the service")])
            #expect(signals.first?.2 == [])
            #expect(signals.dropFirst().first?.1 == [:])
            #expect(signals.dropFirst().first?.2 == ["Lazy"])
            #expect(signals.last?.1 == ["Name": .string("both"), "Count": .uint32(4)])
            #expect(service.stored("Quiet") == .int32(1), "stored even when not announced")
            #expect(service.stored("Fixed") == .string("d"))
            #expect(try await get("Lazy", on: connection, from: client) == .string("y"))
        }
    }

    /// Values, invalidations and removals of one update travel in one signal, built straight
    /// into the message: values in the order given, then every invalidated name.
    @Test func oneUpdateAnnouncesValuesInvalidationsAndRemovalsTogether() async throws {
        try await withServiceAndClient { _, connection, client in
            let service = try Service(connection)
            let reader = try await changes(of: connection, on: client)
            try connection.updateProperties(
                set: ["Count": .uint32(9), "Lazy": .string("z"), "Name": .string("n"), "Quiet": .int32(2)],
                remove: ["Guarded"], interface: Self.interface, path: Self.object)
            try await roundTrip(from: client, to: connection)

            let signals = await reader.cancelAndDrain()
            #expect(signals.count == 1)
            let (interfaceName, changed, invalidated) = try decode(signals.first)
            #expect(interfaceName == Self.interface.rawValue)
            #expect(changed == ["Count": .uint32(9), "Name": .string("n")])
            #expect(invalidated == ["Lazy", "Guarded"])
            if case .dictionary(_, _, let entries)? = signals.first?.body[1] {
                #expect(entries.map(\.key) == [.string("Count"), .string("Name")], "in the order given")
            }
            #expect(service.stored("Guarded") == nil)
            #expect(service.stored("Quiet") == .int32(2))
        }
    }

    @Test func setPropertyRefusesWhatCannotBeStored() async throws {
        try await withServiceAndClient { _, connection, _ in
            let service = try Service(connection)
            let wrongType = expectDBusErrorSync {
                try connection.setProperty("Name", to: .int32(1), interface: Self.interface, path: Self.object)
            }
            #expect(wrongType?.name == DBusError.StandardName.invalidArgs)
            let unknown = expectDBusErrorSync {
                try connection.setProperty("Missing", to: .int32(1), interface: Self.interface, path: Self.object)
            }
            #expect(unknown?.name == DBusError.StandardName.unknownProperty)
            let nowhere = expectDBusErrorSync {
                try connection.setProperty(
                    "Name", to: .string("x"), interface: Self.interface, path: try path("/nowhere"))
            }
            #expect(nowhere?.name == DBusError.StandardName.unknownInterface)
            let unsendable = expectDBusErrorSync {
                try connection.setProperty("Name", to: .string("a\0b"), interface: Self.interface, path: Self.object)
            }
            #expect(unsendable?.code == .invalidValue)
            #expect(service.stored("Name") == .string("initial"))
        }
    }
}
