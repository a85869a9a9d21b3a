/// How a scan filters and reports.
public struct ScanOptions: Sendable, Hashable {
    /// Report every advertisement (BlueZ's `DuplicateData`), not just new devices and changed
    /// advertisement data. Costs a D-Bus signal per advertisement.
    public var allowDuplicates = false
    /// Only devices received at or above this RSSI (dBm).
    public var rssiThreshold: Int16?
    /// Only devices whose advertised name starts with this.
    public var namePrefix: String?
    /// Which radios to scan with.
    public var transport: Transport = .le
    /// Discoveries held for a slow consumer (the central's ``CentralOptions/scanBufferSize`` when nil).
    public var bufferSize: Int?
    /// Scan passively: listen for advertisements without sending scan requests and without
    /// starting discovery, through a BlueZ advertisement monitor (`AdvertisementMonitorManager1`)
    /// that matches the scan's services. It saves the peripherals' and the adapter's energy and
    /// stays off the air, and gets no scan responses (a name sent only in one stays unknown).
    ///
    /// Needs the services to look for (the monitor matches advertisement patterns built from
    /// them: the services listed in the advertisement, or its service data), and a bluetoothd
    /// started with `--experimental` (BlueZ offers monitors only then); otherwise the scan
    /// fails with ``BLEError/Code/invalidArguments`` or ``BLEError/Code/notSupported``.
    public var passive = false

    /// BlueZ's `Transport` filter.
    public enum Transport: String, Sendable, Hashable {
        /// Bluetooth Low Energy only (the default).
        case le
        /// Classic only.
        case bredr
        /// Both.
        case auto
    }

    /// The defaults: new LE devices, no RSSI or name filter.
    public init(
        allowDuplicates: Bool = false, rssiThreshold: Int16? = nil, namePrefix: String? = nil,
        transport: Transport = .le, bufferSize: Int? = nil, passive: Bool = false
    ) {
        self.allowDuplicates = allowDuplicates
        self.rssiThreshold = rssiThreshold
        self.namePrefix = namePrefix
        self.transport = transport
        self.bufferSize = bufferSize
        self.passive = passive
    }
}
