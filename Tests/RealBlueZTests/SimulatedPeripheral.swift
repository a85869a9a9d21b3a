import BLE
import BLESimulator
import BlueZ
import DBus
import Foundation

/// The test peripheral as a BLESimulator virtual peripheral, driven through the simulator's
/// Swift API.
struct SimulatedPeripheral: PeripheralDriver {
    let simulator: Simulator
    /// A connection to the simulator's bus, to see the daemon's subscription state.
    let probe: Connection
    let address: String
    let id: PeripheralID

    func waitUntilSubscribed(_ characteristic: BluetoothUUID) async throws {
        // In the simulator the daemon's `Notifying` (`NotifyAcquired` for AcquireNotify) is
        // the subscription itself.
        try await waitUntil("the simulated subscription to \(characteristic)") {
            let reply = try await probe.call(
                destination: BlueZService.busName, path: .root, interface: .objectManager,
                member: try MemberName("GetManagedObjects"), timeout: .seconds(5))
            let objects: [ObjectPath: [String: [String: DBusValue]]] = try reply.argument(0)
            return objects.values.contains { interfaces in
                guard let properties = interfaces[BlueZInterface.gattCharacteristic1.rawValue],
                    case .string(let uuid)? = properties["UUID"]?.unwrappingVariant,
                    BluetoothUUID(uuid) == characteristic
                else { return false }
                return ["Notifying", "NotifyAcquired"].contains { properties[$0]?.unwrappingVariant == .boolean(true) }
            }
        }
    }

    func send(_ values: [Data], from characteristic: BluetoothUUID) async throws {
        for value in values {
            let delivered = try simulator.notify(
                address: address, characteristic: characteristic.uuidString, value: value)
            guard delivered == 1 else { throw StageError(description: "a notification reached \(delivered) centrals") }
        }
    }

    func value(of characteristic: BluetoothUUID) async throws -> Data {
        guard let value = try simulator.value(address: address, characteristic: characteristic.uuidString) else {
            throw StageError(description: "the simulated peripheral has no \(characteristic)")
        }
        return value
    }

    func dropLink() async throws {
        try simulator.dropLink(address: address, reason: BlueZ.DisconnectReason.remote)
    }
}
