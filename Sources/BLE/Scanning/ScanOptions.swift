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
        transport: Transport = .le, bufferSize: Int? = nil
    ) {
        self.allowDuplicates = allowDuplicates
        self.rssiThreshold = rssiThreshold
        self.namePrefix = namePrefix
        self.transport = transport
        self.bufferSize = bufferSize
    }
}
