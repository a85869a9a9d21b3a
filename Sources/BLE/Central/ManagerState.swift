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
