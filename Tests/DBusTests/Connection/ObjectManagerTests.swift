import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// `org.freedesktop.DBus.ObjectManager`: `GetManagedObjects`, `InterfacesAdded`, `InterfacesRemoved`.
@Suite struct ObjectManagerTests {
    typealias ManagedObjects = [ObjectPath: [String: [String: DBusValue]]]

    static let manager = fixedPath("/org/example")
    static let device = fixedPath("/org/example/dev0")
    static let service1 = fixedPath("/org/example/dev0/service1")
    static let first = fixedInterface("org.example.First")
    static let second = fixedInterface("org.example.Second")

    static func fixedPath(_ text: String) -> ObjectPath {
        do { return try ObjectPath(text) } catch { preconditionFailure("\(error)") }
    }
    static func fixedInterface(_ text: String) -> InterfaceName {
        do { return try InterfaceName(text) } catch { preconditionFailure("\(error)") }
    }

    private var firstInterface: ExportedInterface {
        ExportedInterface(
            Self.first,
            properties: [
                ExportedProperty("Alias", value: .string("dev")),
                ExportedProperty("Connected", value: .boolean(false), access: .readwrite),
                ExportedProperty("Key", value: .bytes(Data([1])), access: .write),
            ])
    }

    private func managedObjects(
        of service: Connection, from client: Connection, at path: ObjectPath = ObjectManagerTests.manager
    ) async throws -> ManagedObjects {
        let reply = try await client.call(
            destination: service.uniqueName, path: path, interface: .objectManager,
            member: try member("GetManagedObjects"))
        #expect(reply.signature == "a{oa{sa{sv}}}")
        return try reply.argument(0)
    }

    private func managerSignals(of service: Connection, on client: Connection) async throws -> SignalReader {
        SignalReader(
            try await client.signals(matching: MatchRule(sender: service.uniqueName, interface: .objectManager)))
    }

    @Test func exportAndUnexportUnderAManager() async throws {
        try await withServiceAndClient { _, service, client in
            try exportPing(on: service)
            service.addObjectManager(at: Self.manager)
            let signals = try await managerSignals(of: service, on: client)
            #expect(try await managedObjects(of: service, from: client).isEmpty)

            try service.export([firstInterface, ExportedInterface(Self.second)], at: Self.device)
            let added = try #require(await signals.next())
            #expect(added.member?.rawValue == "InterfacesAdded")
            #expect(added.path == Self.manager)
            #expect(added.signature == "oa{sa{sv}}")
            #expect(try added.argument(0, as: ObjectPath.self) == Self.device)
            let addedInterfaces: [String: [String: DBusValue]] = try added.argument(1)
            let expected: [String: [String: DBusValue]] = [
                Self.first.rawValue: ["Alias": .string("dev"), "Connected": .boolean(false)],
                Self.second.rawValue: [:],
            ]
            #expect(addedInterfaces == expected, "write-only properties are not listed")
            #expect(try await managedObjects(of: service, from: client) == [Self.device: expected])

            // A deeper object is managed too, and property changes show in later listings.
            try service.export([ExportedInterface(Self.second)], at: Self.service1)
            let deeper = try #require(await signals.next())
            #expect(try deeper.argument(0, as: ObjectPath.self) == Self.service1)
            try service.setProperty("Connected", to: .boolean(true), interface: Self.first, path: Self.device)
            let listed = try await managedObjects(of: service, from: client)
            #expect(listed[Self.device]?[Self.first.rawValue]?["Connected"] == .boolean(true))
            #expect(listed[Self.service1] == [Self.second.rawValue: [:]])

            service.unexport(Self.device, interfaces: [Self.second])
            let removedOne = try #require(await signals.next())
            #expect(removedOne.member?.rawValue == "InterfacesRemoved")
            #expect(removedOne.signature == "oas")
            #expect(try removedOne.argument(0, as: ObjectPath.self) == Self.device)
            #expect(try removedOne.argument(1, as: [String].self) == [Self.second.rawValue])

            service.unexport(Self.device)
            let removedAll = try #require(await signals.next())
            #expect(try removedAll.argument(1, as: [String].self) == [Self.first.rawValue])
            #expect(!service.isExported(Self.device))
            #expect(try await managedObjects(of: service, from: client).keys.sorted() == [Self.service1])
        }
    }

    /// Objects outside the manager's subtree are neither announced nor listed.
    @Test func objectsOutsideTheManagerAreNotManaged() async throws {
        try await withServiceAndClient { _, service, client in
            try exportPing(on: service)
            service.addObjectManager(at: Self.manager)
            let signals = try await managerSignals(of: service, on: client)
            try service.export([ExportedInterface(Self.second)], at: try path("/org/other"))
            try service.export([ExportedInterface(Self.second)], at: try path("/org/examplex"))
            service.unexport(try path("/org/other"))
            try service.export([ExportedInterface(Self.second)], at: Self.device)
            try await roundTrip(from: client, to: service)
            let received = await signals.cancelAndDrain()
            #expect(received.count == 1)
            #expect(try received.first?.argument(0, as: ObjectPath.self) == Self.device)
            #expect(try await managedObjects(of: service, from: client).keys.sorted() == [Self.device])
        }
    }

    @Test func getManagedObjectsWhereThereIsNoManager() async throws {
        try await withServiceAndClient { _, service, client in
            try exportPing(on: service)
            service.addObjectManager(at: Self.manager)
            let error = await expectDBusError {
                try await managedObjects(of: service, from: client, at: TestNames.object)
            }
            #expect(error?.code == .remote)
            #expect(error?.name == DBusError.StandardName.unknownMethod)
        }
    }
}
