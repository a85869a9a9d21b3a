import BlueZ
import DBus

extension Simulator {
    /// Makes a connected peripheral send an SMP Security Request, as sensors that demand a bond
    /// do (or as one does before answering Insufficient Authentication): the central's kernel
    /// pairs without a `Pair` call and bluetoothd asks the default agent what the method needs
    /// (`RequestAuthorization` for Just Works). A link already holding a key good enough is only
    /// encrypted, and a pairing already in progress ignores the request.
    ///
    /// - Returns: how many links started pairing (one per adapter connected to it).
    /// - Throws: `InvalidArguments` for a malformed address or when no link to the peripheral
    ///   is up, `UnknownPeripheral` when no peripheral has the address (see
    ///   ``SimulatorControlError``).
    @discardableResult
    public func requestSecurity(address: String, level: SimulatedPairing.SecurityLevel) throws(DBusError) -> Int {
        let target = try Self.controlAddress(address)
        _ = try requirePeripheral(target)
        let outcome = withDaemon { daemon, state -> (connected: Bool, started: Int) in
            let paths = state.devices.keys.sorted().filter {
                state.devices[$0]?.address == target && state.devices[$0]?.connected == true
            }
            let started = paths.filter { daemon.peerRequestsSecurity(&state, $0, AttributeSecurity(level)) }
            return (!paths.isEmpty, started.count)
        }
        guard let outcome, outcome.connected else {
            throw SimulatorControlError.make(
                SimulatorControlError.invalidArguments, "peripheral \(address) is not connected")
        }
        return outcome.started
    }
}
