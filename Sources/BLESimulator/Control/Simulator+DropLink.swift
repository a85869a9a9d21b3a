import BlueZ
import DBus

extension Simulator {
    /// Drops the link to a peripheral `delay` from now, as a radio losing it would: whatever
    /// link to it is up when the time comes goes down (on every adapter), with `reason` in
    /// `Device1.Disconnected` where the profile emits it. Returns at once; a zero delay drops it
    /// now. The timer belongs to the running bluetoothd, so a restart meanwhile cancels it.
    ///
    /// - Throws: `InvalidArguments` for a malformed address or a negative delay,
    ///   `UnknownPeripheral` when no peripheral has the address (see ``SimulatorControlError``).
    public func dropLink(address: String, after delay: Duration, reason: DisconnectReason = .timeout) throws(DBusError)
    {
        let target = try Self.controlAddress(address)
        _ = try requirePeripheral(target)
        guard delay >= .zero else {
            throw SimulatorControlError.make(SimulatorControlError.invalidArguments, "delay \(delay) is negative")
        }
        withDaemon { daemon, state in
            daemon.schedule(&state, after: delay) { daemon, state in
                for path in state.devices.keys.sorted() where state.devices[path]?.address == target {
                    daemon.linkDown(&state, path, reason: reason)
                }
            }
        }
    }
}
