import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// `ExportedProperty.deferredSet`: a `Set` the server answers itself, replying before it
/// stores and announces the value (and what the value changes with it) in one signal.
@Suite struct DeferredSetTests {
    static let interface = PropertiesTests.fixedInterface("org.example.Deferred")
    static let object = PropertiesTests.fixedPath("/org/example/deferred")

    /// Exports `Level` (answered by `setter`) and `Derived`, which changes with it.
    private func export(
        on connection: Connection, _ setter: @escaping @Sendable (DBusValue, MethodReply) -> Void
    ) throws {
        try connection.export(
            [
                ExportedInterface(
                    Self.interface,
                    properties: [
                        ExportedProperty("Level", value: .int32(0), access: .readwrite, deferredSet: setter),
                        ExportedProperty("Derived", value: .boolean(false)),
                    ])
            ], at: Self.object)
    }

    private func set(_ value: DBusValue, on service: Connection, from client: Connection) async throws {
        _ = try await client.call(
            destination: service.uniqueName, path: Self.object, interface: .properties, member: try MemberName("Set"),
            arguments: [.string(Self.interface.rawValue), .string("Level"), .variant(value)])
    }

    private func stored(_ name: String, _ connection: Connection) -> DBusValue? {
        connection.property(name, interface: Self.interface, path: Self.object)
    }

    @Test("the reply leaves before the one PropertiesChanged the setter sends afterwards")
    func replyThenOneCoalescedSignal() async throws {
        try await withServiceAndClient { bus, service, client in
            try export(on: service) { [weak service] value, reply in
                reply.succeed()
                try? service?.updateProperties(
                    [("Level", value), ("Derived", .boolean(true))], interface: Self.interface, path: Self.object)
            }
            let monitor = try BusMonitor(bus: .address(bus.address))
            defer { monitor.stop() }
            try await set(.int32(7), on: service, from: client)
            let announced = try await eventually {
                monitor.messages.contains { $0.member?.rawValue == "PropertiesChanged" }
            }
            #expect(announced, "the setter's PropertiesChanged reached the bus")
            let seen = monitor.messages.filter { $0.sender == service.uniqueName }
            let reply = try #require(seen.firstIndex { $0.kind == .methodReturn })
            let signals = seen.indices.filter { seen[$0].member?.rawValue == "PropertiesChanged" }
            #expect(signals.count == 1)
            let signal = try #require(signals.first)
            #expect(reply < signal, "replied first, announced after")
            let changed: [String: DBusValue] = try seen[signal].argument(1)
            #expect(changed == ["Level": .int32(7), "Derived": .boolean(true)])
            #expect(stored("Level", service) == .int32(7))
        }
    }

    @Test("a refusal is the caller's error, and nothing is stored or announced")
    func refusalStoresNothing() async throws {
        try await withServiceAndClient { bus, service, client in
            try export(on: service) { _, reply in
                reply.fail(DBusError.reply("org.example.Error.Busy", "not now"))
            }
            let monitor = try BusMonitor(bus: .address(bus.address))
            defer { monitor.stop() }
            let error = await expectDBusError { try await set(.int32(3), on: service, from: client) }
            #expect(error?.name == "org.example.Error.Busy")
            #expect(error?.message == "not now")
            #expect(stored("Level", service) == .int32(0))
            #expect(!monitor.messages.contains { $0.member?.rawValue == "PropertiesChanged" })
        }
    }

    @Test("a value of the wrong type is refused before the setter runs")
    func wrongTypeNeverReachesTheSetter() async throws {
        try await withServiceAndClient { _, service, client in
            let calls = EventLog<DBusValue>()
            try export(on: service) { value, reply in
                calls.record(value)
                reply.succeed()
            }
            let error = await expectDBusError { try await set(.string("seven"), on: service, from: client) }
            #expect(error?.name == DBusError.StandardName.invalidArgs)
            #expect(calls.all.isEmpty)
        }
    }
}
