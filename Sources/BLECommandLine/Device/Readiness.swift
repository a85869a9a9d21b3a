import BLE

/// The one clear error for an adapter state that will not become powered on by waiting.
enum Readiness {
    /// Why nothing can be done in `state`; nil for `.poweredOn`, and for `.resetting` (bluetoothd
    /// restarting), which is worth a short wait.
    static func failure(_ state: ManagerState, adapter: String, adapters: [String], bus: Bus) -> BLEError? {
        let place = bus == .system ? "the system bus" : "bus \(bus)"
        switch state {
        case .unknown:
            return BLEError(.bluetoothUnavailable, message: "bluetoothd is not running on \(place)")
        case .unsupported:
            let known = adapters.isEmpty ? "bluetoothd has none" : "adapters: " + adapters.joined(separator: ", ")
            return BLEError(.unsupported, message: "no adapter \(adapter) (\(known))")
        case .poweredOff:
            return BLEError(
                .poweredOff, message: "adapter \(adapter) is off (bluetoothctl power on, or rfkill unblock)")
        case .unauthorized:
            return BLEError(
                .unauthorized, message: "the D-Bus policy on \(place) does not let this user use bluetoothd")
        default:
            return nil
        }
    }
}
