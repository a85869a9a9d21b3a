import BlueZ
import DBus

extension Simulator {
    /// Parses an address given to the control API, naming the failure `InvalidArguments`.
    static func controlAddress(_ text: String) throws(DBusError) -> BluetoothAddress {
        do {
            return try BluetoothAddress(text)
        } catch {
            throw SimulatorControlError.make(
                SimulatorControlError.invalidArguments, "\"\(text)\" is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
        }
    }

    /// The peripheral at `address`, or `UnknownPeripheral`.
    func requirePeripheral(_ address: BluetoothAddress) throws(DBusError) -> VirtualPeripheral {
        guard let record = core.state.withLock({ $0.peripherals[address] }) else {
            throw SimulatorControlError.make(
                SimulatorControlError.unknownPeripheral, "no peripheral has address \(address)")
        }
        return record.definition
    }

    /// Checks that the peripheral at `address` has a characteristic `uuid` (any UUID spelling),
    /// or throws `UnknownPeripheral` / `UnknownCharacteristic`.
    func requireCharacteristic(_ uuid: String, at address: BluetoothAddress) throws(DBusError) {
        let peripheral = try requirePeripheral(address)
        let found = peripheral.services.contains { service in
            service.characteristics.contains { BlueZUUIDMatch.same($0.uuid, uuid) }
        }
        guard found else {
            throw SimulatorControlError.make(
                SimulatorControlError.unknownCharacteristic, "peripheral \(address) has no characteristic \(uuid)")
        }
    }

    /// The number of adapters of the simulated controller.
    var adapterCount: Int { options.adapters.count }
}
