import BLE
import BLESimulator
import DBus
import Foundation
import Testing

/// Calls into the manager's GATT application are accepted from bluetoothd only: a rogue client
/// on the bus that calls ReadValue or WriteValue gets AccessDenied and the app sees nothing.
@Suite("PeripheralManager: calls from other clients", .timeLimit(.minutes(1)))
struct PeripheralManagerSenderTests {
    /// The manager's connection: the client that answers GetManagedObjects at the app's path.
    static func managerObjects(_ rogue: BusProbe) async throws -> (BusName, [ObjectPath: [String: [String: DBusValue]]])
    {
        for name in try await rogue.connection.listNames() where name.hasPrefix(":") {
            guard
                let reply = try? await rogue.connection.call(
                    destination: try BusName(name), path: try ObjectPath("/org/swift_ble/gatt"),
                    interface: .objectManager,
                    member: try MemberName("GetManagedObjects"), timeout: .seconds(5))
            else { continue }
            let objects: [ObjectPath: [String: [String: DBusValue]]] = try reply.argument(0)
            if !objects.isEmpty { return (try BusName(name), objects) }
        }
        throw DBusError(.invalidValue, message: "no manager on the bus")
    }

    @Test("a rogue ReadValue and WriteValue get AccessDenied; bluetoothd's still work")
    func rogueCallsAreRefused() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let requests = RequestCollector(manager)
            try await manager.add(TestServices.heartRate)
            let rogue = try await BusProbe.open(fixture)
            defer { rogue.close() }
            let (owner, objects) = try await Self.managerObjects(rogue)
            let path = try #require(
                objects.first { _, interfaces in
                    interfaces["org.bluez.GattCharacteristic1"]?["UUID"] == .string(BluetoothUUID("2A39").uuidString)
                }?.key)
            let empty = DBusValue.dictionary(key: .string, value: .variant, [])
            for (member, arguments) in [("ReadValue", [empty]), ("WriteValue", [.bytes(Data([1])), empty])] {
                let error = await #expect(throws: DBusError.self) {
                    try await rogue.connection.call(
                        destination: owner, path: path, interface: try InterfaceName("org.bluez.GattCharacteristic1"),
                        member: try MemberName(member), arguments: arguments, timeout: .seconds(5))
                }
                #expect(error?.name == DBusError.StandardName.accessDenied)
            }
            // bluetoothd (the simulator's remote central) still reaches the app, and it is the
            // first request the app sees.
            let simulator = fixture.simulator
            let read = Task { try await simulator.remoteRead(characteristic: "2A39") }
            let request = try #require(try await requests.next())
            #expect(request.kind == .read)
            #expect(request.respond(with: Data([0x42])))
            #expect(try await read.value == Data([0x42]))
        }
    }
}
