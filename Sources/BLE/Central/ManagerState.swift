/// The state of a ``Central``'s adapter, as Core Bluetooth's `CBManagerState`.
///
/// ```
///            bluetoothd appears              adapter found
///  unknown ─────────────────────▶ (derive) ──────────────────▶ poweredOff ⇄ poweredOn
///     ▲                               │ no adapter                  │ bluetoothd exits
///     │                               ▼                             ▼
///     └──── never seen         unsupported ◀──── adapter gone    resetting ──▶ (derive) on return
/// ```
public enum ManagerState: Sendable, Hashable, CustomStringConvertible {
    /// Not known yet: bluetoothd has not been reached.
    case unknown
    /// bluetoothd went away (restarting); the state comes back when it does.
    case resetting
    /// No Bluetooth adapter (or not the one asked for).
    case unsupported
    /// The D-Bus policy does not let this process use BlueZ.
    case unauthorized
    /// The adapter is powered off (or blocked by rfkill).
    case poweredOff
    /// Ready.
    case poweredOn

    /// A short, human-readable form.
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .resetting: "resetting"
        case .unsupported: "unsupported"
        case .unauthorized: "unauthorized"
        case .poweredOff: "poweredOff"
        case .poweredOn: "poweredOn"
        }
    }
}

extension ManagerState {
    /// Waits on `states` (current value first) until the adapter is powered on: shared by
    /// ``Central/waitUntilPoweredOn(timeout:)`` and ``PeripheralManager/waitUntilPoweredOn(timeout:)``.
    static func waitForPoweredOn(_ states: AsyncStream<ManagerState>, timeout: Duration) async throws(BLEError) {
        try await withDeadline(timeout, what: "waiting for the adapter to power on") { () throws(BLEError) in
            var current = true
            for await state in states {
                switch state {
                case .poweredOn: return
                case .unauthorized:
                    throw BLEError(.unauthorized, message: "the D-Bus policy denies access to bluetoothd")
                case .unsupported where current:
                    // Only the state at the call: bluetoothd passes through "no adapter" while it starts.
                    throw BLEError(.unsupported, message: "there is no such adapter")
                default: break
                }
                current = false
            }
            throw BLEError(.cancelled, message: "the manager was closed")
        }
    }
}
