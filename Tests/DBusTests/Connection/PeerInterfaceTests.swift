import CDBus
import Testing

@testable import DBus

/// Every connection answers `org.freedesktop.DBus.Peer`, as libdbus's own dispatch does, though
/// the loop pops its messages itself.
@Suite struct PeerInterfaceTests {
    static let peerPath = fixedPath("/org/example/anything")

    private static func fixedPath(_ text: String) -> ObjectPath { ObjectPath(unchecked: text) }

    private static func call(_ member: String, to target: Connection, from caller: Connection) async throws(DBus
        .DBusError)
        -> DBusMessage
    {
        try await caller.call(
            destination: target.uniqueName, path: peerPath, interface: .peer, member: try MemberName(member))
    }

    /// The error name a call ends with, or "answered".
    private static func outcome(_ member: String, to target: Connection, from caller: Connection) async -> String {
        do {
            _ = try await call(member, to: target, from: caller)
            return "answered"
        } catch {
            return error.name ?? "\(error.code)"
        }
    }

    @Test("Ping is answered with an empty reply, on any path")
    func ping() async throws {
        try await withServiceAndClient { _, service, client in
            let reply = try await Self.call("Ping", to: service, from: client)
            #expect(reply.kind == .methodReturn)
            #expect(reply.body.isEmpty)
        }
    }

    @Test("GetMachineId answers what libdbus reads as this machine's id")
    func machineID() async throws {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let local = dbus_try_get_local_machine_id(&error)
        defer { if let local { dbus_free(local) } }
        try await withServiceAndClient { _, service, client in
            if let local {
                let reply = try await Self.call("GetMachineId", to: service, from: client)
                #expect(reply.body == [.string(String(cString: local))])
            } else {
                // A machine without an id (no /etc/machine-id): an error, as libdbus gives.
                await #expect(throws: DBus.DBusError.self) {
                    try await Self.call("GetMachineId", to: service, from: client)
                }
            }
        }
    }

    @Test("another method of the interface is an UnknownMethod error; the connection goes on")
    func unknownMember() async throws {
        try await withServiceAndClient { _, service, client in
            let refused = await Self.outcome("Pong", to: service, from: client)
            #expect(refused == DBus.DBusError.StandardName.unknownMethod)
            let after = try await Self.call("Ping", to: service, from: client)
            #expect(after.kind == .methodReturn)
        }
    }
}
