import BLE
import BlueZ
import DBus

/// The few calls the stage makes to the real bluetoothd directly, beside the SDK under test.
enum RealDaemonCalls {
    /// The address of `adapter` (`Adapter1.Address`).
    static func address(of adapter: String, on connection: Connection) async throws -> String {
        let reply = try await connection.call(
            destination: BlueZService.busName, path: try ObjectPath("/org/bluez/\(adapter)"),
            interface: .properties, member: try MemberName("Get"),
            arguments: [.string(BlueZInterface.adapter1.rawValue), .string("Address")], timeout: .seconds(10))
        guard case .string(let address)? = reply.body.first?.unwrappingVariant else {
            throw StageError(description: "\(adapter) has no address")
        }
        return address
    }

    /// Removes the peripheral from the central's adapter (disconnecting it if needed), so a
    /// test starts as if BlueZ had never seen it. Under btvirt this also matters for scanning:
    /// the emulator reports an advertiser only when advertising or scanning starts, and a
    /// device BlueZ already knows gets no new signal then.
    static func forget(_ id: PeripheralID, on connection: Connection) async throws {
        let adapter = try BlueZPath.adapter(named: id.adapter)
        let device = try BlueZPath.device(address: id.address, adapter: adapter)
        do {
            _ = try await connection.call(
                destination: BlueZService.busName, path: adapter, interface: BlueZInterface.adapter1,
                member: BlueZMethod.removeDevice, arguments: [.objectPath(device)], timeout: .seconds(20))
        } catch  where error.name == "org.bluez.Error.DoesNotExist" {}
    }

    /// Disconnects the central `central` from the peripheral's side: `Device1.Disconnect` on
    /// the device object the peripheral's adapter has for it.
    static func disconnect(central: CentralID, on connection: Connection) async throws {
        let device = try BlueZPath.device(
            address: central.address, adapter: try BlueZPath.adapter(named: central.adapter))
        _ = try await connection.call(
            destination: BlueZService.busName, path: device, interface: BlueZInterface.device1,
            member: try MemberName("Disconnect"), timeout: .seconds(20))
    }
}
