import BlueZ
import Foundation

extension Daemon {
    /// A peripheral sends `value` from a characteristic: it becomes the stored value and goes,
    /// through ``push(_:_:_:)``, to every adapter connected to the peripheral and subscribed.
    /// Returns how many deliveries were made (one per subscribed adapter link).
    ///
    /// Devices whose GATT database was never resolved cannot have subscribers, so they are
    /// skipped, and the value is stored only when some device has one: what
    /// ``Simulator/notify(address:characteristic:value:)`` has always done.
    func broadcast(_ state: inout SimState, address: BluetoothAddress, characteristic uuid: String, value: Data) -> Int
    {
        var delivered = 0
        for device in state.devices.values where device.address == address {
            guard let gatt = device.gatt else { continue }
            for service in gatt.services {
                for (c, characteristic) in service.characteristics.enumerated()
                where BlueZUUIDMatch.same(characteristic.uuid, uuid) {
                    store(&state, address, ValueKey(service: service.index, characteristic: c), value, offset: 0)
                    if push(&state, characteristic.path, value) { delivered += 1 }
                }
            }
        }
        return delivered
    }
}
