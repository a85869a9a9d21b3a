import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// Well-known names: `requestName`, `releaseName`, `nameOwner`, `listNames`.
@Suite struct NameOwnershipTests {
    @Test func requestReleaseAndQueryAName() async throws {
        try await withConnections(2) { _, connections in
            let (owner, other) = (connections[0], connections[1])
            let name = try busName("org.example.Named")
            #expect(try await other.nameOwner(of: name) == nil)
            #expect(try await owner.requestName(name) == .primaryOwner)
            #expect(try await owner.requestName(name) == .alreadyOwner)
            #expect(try await other.requestName(name) == .exists)
            #expect(try await other.nameOwner(of: name) == owner.uniqueName)
            #expect(try await other.listNames().contains(name.rawValue))
            #expect(try await other.nameOwner(of: owner.uniqueName) == owner.uniqueName, "unique names own themselves")

            try await owner.releaseName(name)
            #expect(try await other.nameOwner(of: name) == nil)
            #expect(try await !other.listNames().contains(name.rawValue))
            let notOwned = await expectDBusError { try await owner.releaseName(name) }
            #expect(notOwned?.code == .nameNotOwned)
        }
    }

    /// A call to a well-known name reaches whoever owns it at the time.
    @Test func callsToAWellKnownNameFollowItsOwner() async throws {
        try await withConnections(3) { _, connections in
            let (first, second, client) = (connections[0], connections[1], connections[2])
            let name = try busName("org.example.Service")
            for connection in [first, second] {
                let unique = connection.uniqueName.rawValue
                try connection.export(
                    [
                        ExportedInterface(
                            TestNames.interface,
                            methods: [.immediate(try member("Who"), out: try signature("s")) { _ in [.string(unique)] }]
                        )
                    ],
                    at: TestNames.object)
            }
            func who() async throws -> String {
                try await client.call(
                    destination: name, path: TestNames.object, interface: TestNames.interface, member: try member("Who")
                ).argument(0)
            }
            try await first.requestName(name)
            #expect(try await who() == first.uniqueName.rawValue)
            // Queued behind the owner, then promoted when it lets go.
            #expect(try await second.requestName(name, flags: []) == .inQueue)
            try await first.releaseName(name)
            #expect(try await client.nameOwner(of: name) == second.uniqueName)
            #expect(try await who() == second.uniqueName.rawValue)
        }
    }

    @Test func replacingAnOwnerThatAllowsIt() async throws {
        try await withConnections(2) { _, connections in
            let (first, second) = (connections[0], connections[1])
            let name = try busName("org.example.Replaceable")
            let lost = SignalReader(
                try await first.signals(
                    matching: MatchRule(
                        sender: .bus, interface: .bus, member: try member("NameLost"), arguments: [0: name.rawValue])))
            #expect(try await first.requestName(name, flags: [.allowReplacement]) == .primaryOwner)
            #expect(try await second.requestName(name, flags: [.replaceExisting, .doNotQueue]) == .primaryOwner)
            #expect(try await first.nameOwner(of: name) == second.uniqueName)
            let signal = try #require(await lost.next())
            #expect(try signal.argument(0, as: String.self) == name.rawValue)
            // An owner that did not allow replacement keeps the name.
            #expect(try await first.requestName(name, flags: [.replaceExisting, .doNotQueue]) == .exists)
        }
    }

    @Test func theBusRefusesUniqueNames() async throws {
        try await withConnections(1) { _, connections in
            let error = await expectDBusError { try await connections[0].requestName(try busName(":1.999")) }
            #expect(error?.code == .remote)
            #expect(error?.name == DBusError.StandardName.invalidArgs)
        }
    }
}
