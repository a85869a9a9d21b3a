import BLE
import BlueZ
import DBus
import Foundation

/// The test peripheral on the real daemon: Tests/RealBlueZ/peripheral.py serving hci1,
/// driven through its org.swiftble.TestPeripheral1 interface on the guest's system bus.
struct ScriptedPeripheral: PeripheralDriver {
    static let busName = "org.swiftble.TestPeripheral"
    let connection: Connection
    let id: PeripheralID

    /// Waits for the peripheral program on the system bus and puts it back in its initial state.
    static func attach(adapter: String, centralAdapter: String) async throws -> ScriptedPeripheral {
        let connection = try await Connection(bus: .system)
        let name = try BusName(busName)
        let arrivals = try await connection.nameOwnerChanges(of: name)
        if try await connection.nameOwner(of: name) == nil {
            _ = try await within(
                .seconds(60), "\(busName) on the system bus (is Tests/RealBlueZ/peripheral.py running?)"
            ) {
                for await change in arrivals where change.newOwner != nil { return true }
                return false
            }
        }
        arrivals.subscription.cancel()
        let address = try await RealDaemonCalls.address(of: adapter, on: connection)
        let peripheral = ScriptedPeripheral(
            connection: connection, id: try PeripheralID(adapter: centralAdapter, address: address))
        _ = try await peripheral.control("Reset")
        try await RealDaemonCalls.forget(peripheral.id, on: connection)
        return peripheral
    }

    func waitUntilSubscribed(_ characteristic: BluetoothUUID) async throws {
        // bluetoothd on the peripheral's side calls StartNotify only after it answered the
        // central's CCC write: values sent before that are dropped.
        try await waitUntil("the peripheral seeing the subscription to \(characteristic)") {
            let reply = try await control("Subscribed", [.string(characteristic.uuidString)])
            return reply.body.first == .boolean(true)
        }
    }

    func send(_ values: [Data], from characteristic: BluetoothUUID) async throws {
        _ = try await control(
            "Send", [.string(characteristic.uuidString), .array(.array(.byte), values.map { .bytes($0) })])
    }

    func value(of characteristic: BluetoothUUID) async throws -> Data {
        try await control("Value", [.string(characteristic.uuidString)]).argument(0)
    }

    func dropLink() async throws {
        let dropped: UInt32 = try await control("DropLinks").argument(0)
        guard dropped > 0 else { throw StageError(description: "the peripheral had no link to drop") }
    }

    func close() { connection.close() }

    /// Stops (`true`) or resumes the peripheral's advertising, so that another peripheral on
    /// the same adapter is tested without two advertisements churning the controller.
    static func setQuiet(_ quiet: Bool, on connection: Connection) async throws {
        _ = try await connection.call(
            destination: try BusName(busName), path: try ObjectPath("/org/swiftble/TestPeripheral"),
            interface: try InterfaceName("org.swiftble.TestPeripheral1"), member: try MemberName("Quiet"),
            arguments: [.boolean(quiet)], timeout: .seconds(20))
    }

    private func control(_ member: String, _ arguments: [DBusValue] = []) async throws -> DBusMessage {
        try await connection.call(
            destination: try BusName(Self.busName), path: try ObjectPath("/org/swiftble/TestPeripheral"),
            interface: try InterfaceName("org.swiftble.TestPeripheral1"), member: try MemberName(member),
            arguments: arguments, timeout: .seconds(20))
    }
}
