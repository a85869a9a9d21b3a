/// Which bluetoothd the simulator imitates: the D-Bus-visible differences between releases
/// (bluez-dbus-api.md §11). Clients must feature-detect, so tests should run on both.
public struct BlueZProfile: Sendable, Hashable, Codable {
    /// The release imitated, e.g. "5.66".
    public var version: String
    /// GATT objects carry `Handle` (≥ 5.69); without it clients parse handles from paths.
    public var gattHandles: Bool
    /// `Device1.Disconnected(reason, message)` is emitted before `Connected=false` (≥ 5.83).
    public var disconnectedSignal: Bool
    /// A second Connect while one is pending fails with `InProgress "In Progress"` (≥ 5.82)
    /// instead of `Failed "Operation already in progress"`.
    public var connectInProgressError: Bool
    /// `Adapter1.PowerState` is visible (≥ 5.73; experimental before).
    public var powerState: Bool
    /// `AcquireNotify` accepts indicate-only characteristics (≥ 5.80).
    public var acquireNotifyOnIndicate: Bool
    /// StopDiscovery keeps connected temporary devices (≥ 5.77; 5.66 removed them).
    public var keepsConnectedTemporaries: Bool

    /// BlueZ 5.66, as shipped by Debian 12: the default.
    public static let v5_66 = BlueZProfile(
        version: "5.66", gattHandles: false, disconnectedSignal: false, connectInProgressError: false,
        powerState: false, acquireNotifyOnIndicate: false, keepsConnectedTemporaries: false)

    /// BlueZ 5.87, the newest release described by the reference.
    public static let v5_87 = BlueZProfile(
        version: "5.87", gattHandles: true, disconnectedSignal: true, connectInProgressError: true,
        powerState: true, acquireNotifyOnIndicate: true, keepsConnectedTemporaries: true)

    /// The profile named `version` ("5.66" or "5.87").
    public static func named(_ version: String) -> BlueZProfile? {
        switch version {
        case "5.66": .v5_66
        case "5.87", "latest": .v5_87
        default: nil
        }
    }
}
