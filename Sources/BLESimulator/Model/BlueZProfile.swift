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
    /// A discovery filter without UUIDs, RSSI, Pathloss, Pattern, `DuplicateData=true` or a
    /// Transport narrower than the adapter's counts as no filter (≥ 5.67, commit de8e7cfce):
    /// the discoverable-flag rule and the 8 dBm RSSI threshold stay. 5.66: any filter counts.
    public var regularDiscoveryForDefaultFilters: Bool
    /// Service-data UUIDs join `Device1.UUIDs` before resolution (≥ 5.69).
    public var serviceDataUUIDs: Bool
    /// `Device1.AdvertisingFlags` (and `AdvertisingData`) are visible (≥ 5.78; experimental before).
    public var advertisingFlags: Bool
    /// `Device1.CablePairing` exists (≥ 5.83).
    public var cablePairing: Bool
    /// Discovery filter `Pattern` matches addresses case-insensitively (5.87, commit c6bc42d69).
    public var patternIgnoresAddressCase: Bool
    /// Services claimed by a plugin are exported, read-only (≥ 5.80, `[GATT]
    /// ExportClaimedServices` default); 5.66 leaves them out of the object tree.
    public var exportsClaimedServices: Bool

    // The release's number reads better than any camel-cased spelling of it.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    /// BlueZ 5.66, as shipped by Debian 12: the default.
    public static let v5_66 = BlueZProfile(
        version: "5.66", gattHandles: false, disconnectedSignal: false, connectInProgressError: false,
        powerState: false, acquireNotifyOnIndicate: false, keepsConnectedTemporaries: false,
        regularDiscoveryForDefaultFilters: false, serviceDataUUIDs: false, advertisingFlags: false, cablePairing: false,
        patternIgnoresAddressCase: false, exportsClaimedServices: false)

    // swift-format-ignore: AlwaysUseLowerCamelCase
    /// BlueZ 5.87, the newest release described by the reference.
    public static let v5_87 = BlueZProfile(
        version: "5.87", gattHandles: true, disconnectedSignal: true, connectInProgressError: true,
        powerState: true, acquireNotifyOnIndicate: true, keepsConnectedTemporaries: true,
        regularDiscoveryForDefaultFilters: true, serviceDataUUIDs: true, advertisingFlags: true, cablePairing: true,
        patternIgnoresAddressCase: true, exportsClaimedServices: true)

    /// A failed CCC write answers `AcquireNotify` with the mapped ATT error; 5.66's
    /// `register_notify_io_cb` frees the session and never answers (the caller's timeout
    /// fires). Changed with the AcquireNotify rework that also allowed indications (5.80).
    public var acquireNotifyAnswersCCCErrors: Bool { acquireNotifyOnIndicate }

    /// `LEAdvertisement1`'s `ScanResponse…` properties are parsed (5.80, commit ab6502473,
    /// the same release as the AcquireNotify rework); earlier releases skip them silently.
    public var scanResponseProperties: Bool { acquireNotifyOnIndicate }

    /// The profile named `version` ("5.66" or "5.87").
    public static func named(_ version: String) -> BlueZProfile? {
        switch version {
        case "5.66": .v5_66
        case "5.87", "latest": .v5_87
        default: nil
        }
    }
}
