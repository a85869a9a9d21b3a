import BlueZ
import DBus

extension Central {
    /// This central's adapter: its name and, while bluetoothd reports it, its address.
    var adapterIdentity: AdapterIdentity { session.adapterIdentity(name: adapterName, at: adapterPath) }

    /// Whether `id` names this central's adapter: by the adapter's address where the ID and
    /// bluetoothd both give it (the adapter may have another `hciN` name than when the ID was
    /// made), else by name.
    func isOnThisAdapter(_ id: PeripheralID) -> Bool {
        // An ID without the adapter's address names it by name alone: the adapter's address is
        // not read (and parsed) from the mirror then, on every connect.
        guard id.adapterBluetoothAddress != nil else { return id.adapter == adapterName }
        let adapter = adapterIdentity
        return id.isOnAdapter(name: adapter.name, address: adapter.address)
    }

    /// Throws ``BLEError/Code/invalidArguments`` unless `id` names this central's adapter.
    func checkOnThisAdapter(_ id: PeripheralID) throws(BLEError) {
        guard isOnThisAdapter(id) else {
            throw BLEError(.invalidArguments, message: "this central uses \(adapterName), not \(id.adapter)")
        }
    }

    /// The identifier the SDK hands out for the device at `path` that `id` names: this
    /// adapter's name and address (as bluetoothd reports it now) and the device's address type
    /// (when the mirror holds the device), whatever `id` itself knew of them.
    func identifier(_ id: PeripheralID, at path: ObjectPath) -> PeripheralID {
        let type = session.read {
            $0.properties(at: path, interface: BlueZInterface.device1)?[DeviceProperties.Key.addressType]
        }
        let address = BlueZPath.deviceAddress(of: path) ?? id.bluetoothAddress
        return PeripheralID(
            adapter: adapterIdentity, address: address, type: type.flatMap { try? AddressType(dbusValue: $0) })
    }
}

extension BlueZSession {
    /// The adapter at `path` (named `name`), with its address when the mirror holds it.
    func adapterIdentity(name: String, at path: ObjectPath) -> AdapterIdentity {
        // The one property, not the adapter's whole set decoded: this runs on every connect.
        let value = read { $0.properties(at: path, interface: BlueZInterface.adapter1)?[AdapterProperties.Key.address] }
        return AdapterIdentity(name: name, address: value.flatMap { try? BluetoothAddress(dbusValue: $0) })
    }
}
