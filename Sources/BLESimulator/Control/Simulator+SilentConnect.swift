import BlueZ
import DBus

extension Simulator {
    /// Makes the next link to a peripheral come up without `Connected=true`: Connect succeeds,
    /// the property reads true, GATT resolves and `ServicesResolved=true` is signalled, but the
    /// `Connected` change is never sent. bluetoothd 5.66 does this when the ATT socket of its
    /// Connect is up before the kernel's connection event reaches it (src/device.c:
    /// `att_connect_cb` marks the device connected silently; `device_add_connection` then finds
    /// it connected and logs "Device … is already connected" instead of signalling).
    ///
    /// - Throws: `InvalidArguments` for a malformed address, `UnknownPeripheral` when no
    ///   peripheral has the address (see ``SimulatorControlError``).
    public func silenceNextConnectedSignal(address: String) throws(DBusError) {
        let target = try Self.controlAddress(address)
        _ = try requirePeripheral(target)
        _ = withDaemon { _, state in state.silentConnects.insert(target) }
    }
}
