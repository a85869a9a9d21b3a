import BlueZ
import Foundation

/// What to advertise with ``PeripheralManager/startAdvertising(_:)``: BlueZ's
/// `LEAdvertisement1` properties (bluez-dbus-api.md §6.2).
public struct Advertisement: Sendable, Hashable {
    /// Connectable (`peripheral`) or not (`broadcast`).
    public enum Kind: Sendable, Hashable {
        /// Connectable, scannable undirected advertising.
        case peripheral
        /// Non-connectable advertising; cannot be discoverable.
        case broadcast
    }

    /// What bluetoothd adds to the advertisement itself (`Includes`), where the adapter
    /// lists it in `SupportedIncludes`.
    public enum Include: String, Sendable, Hashable, CaseIterable {
        /// The controller's TX power.
        case txPower = "tx-power"
        /// The adapter's appearance.
        case appearance
        /// The adapter's name (when ``Advertisement/localName`` is nil).
        case localName = "local-name"
    }

    /// The PHY of extended advertising, where the adapter lists it in `SupportedSecondaryChannels`.
    public enum SecondaryChannel: String, Sendable, Hashable, CaseIterable {
        /// LE 1M.
        case oneM = "1M"
        /// LE 2M.
        case twoM = "2M"
        /// LE Coded (long range).
        case coded = "Coded"
    }

    /// Connectable or not.
    public var kind: Kind
    /// `LocalName`.
    public var localName: String?
    /// `ServiceUUIDs`.
    public var serviceUUIDs: [BluetoothUUID]
    /// `SolicitUUIDs`.
    public var solicitUUIDs: [BluetoothUUID]
    /// `ManufacturerData`: company identifier → non-empty data.
    public var manufacturerData: [UInt16: Data]
    /// `ServiceData`.
    public var serviceData: [BluetoothUUID: Data]
    /// `Appearance`.
    public var appearance: UInt16?
    /// `TxPower` in dBm (−127…20), where the adapter supports `CanSetTxPower`.
    public var txPower: Int16?
    /// `Includes`.
    public var includes: Set<Include>
    /// `Discoverable` (general discoverable flag); nil leaves it to bluetoothd.
    public var isDiscoverable: Bool?
    /// `DiscoverableTimeout`, seconds (sets the limited discoverable flag).
    public var discoverableTimeout: UInt16?
    /// `Duration`: seconds of each rotation when several advertisements share the controller.
    public var duration: UInt16?
    /// `Timeout`: the advertisement's lifetime in seconds; then bluetoothd calls `Release` and
    /// the manager sends ``PeripheralManagerEvent/advertisingStopped``.
    public var timeout: UInt16?
    /// `MinInterval`, whole milliseconds (20 ms … 10 485 s).
    public var minInterval: Duration?
    /// `MaxInterval`, whole milliseconds.
    public var maxInterval: Duration?
    /// `SecondaryChannel`.
    public var secondaryChannel: SecondaryChannel?
    /// What an active scanner gets when it asks for more; see ``ScanResponse`` for which
    /// bluetoothd takes it.
    public var scanResponse: ScanResponse?

    /// Creates advertisement data.
    public init(
        kind: Kind = .peripheral, localName: String? = nil, serviceUUIDs: [BluetoothUUID] = [],
        solicitUUIDs: [BluetoothUUID] = [], manufacturerData: [UInt16: Data] = [:],
        serviceData: [BluetoothUUID: Data] = [:], appearance: UInt16? = nil, txPower: Int16? = nil,
        includes: Set<Include> = [], isDiscoverable: Bool? = nil, discoverableTimeout: UInt16? = nil,
        duration: UInt16? = nil, timeout: UInt16? = nil, minInterval: Duration? = nil,
        maxInterval: Duration? = nil, secondaryChannel: SecondaryChannel? = nil, scanResponse: ScanResponse? = nil
    ) {
        self.kind = kind
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.solicitUUIDs = solicitUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.appearance = appearance
        self.txPower = txPower
        self.includes = includes
        self.isDiscoverable = isDiscoverable
        self.discoverableTimeout = discoverableTimeout
        self.duration = duration
        self.timeout = timeout
        self.minInterval = minInterval
        self.maxInterval = maxInterval
        self.secondaryChannel = secondaryChannel
        self.scanResponse = scanResponse
    }

    /// The exported properties; absent values are left out.
    var properties: LEAdvertisementProperties {
        var out = LEAdvertisementProperties(type: kind == .broadcast ? .broadcast : .peripheral)
        out.localName = localName
        out.serviceUUIDs = Self.exported(serviceUUIDs)
        out.solicitUUIDs = Self.exported(solicitUUIDs)
        out.manufacturerData = manufacturerData.isEmpty ? nil : manufacturerData
        out.serviceData = Self.exported(serviceData)
        out.appearance = appearance
        out.txPower = txPower
        out.includes = includes.isEmpty ? nil : Include.allCases.filter(includes.contains).map(\.rawValue)
        out.discoverable = isDiscoverable
        out.discoverableTimeout = discoverableTimeout
        out.duration = duration
        out.timeout = timeout
        out.minInterval = minInterval.map(Self.milliseconds)
        out.maxInterval = maxInterval.map(Self.milliseconds)
        out.secondaryChannel = secondaryChannel?.rawValue
        scanResponse?.export(into: &out)
        return out
    }

    /// UUIDs as exported: their strings, or nothing for none.
    static func exported(_ uuids: [BluetoothUUID]) -> [String]? {
        uuids.isEmpty ? nil : uuids.map(\.uuidString)
    }

    /// Service data as exported: keyed by the UUID's string, or nothing for none.
    static func exported(_ data: [BluetoothUUID: Data]) -> [String: Data]? {
        data.isEmpty ? nil : Dictionary(uniqueKeysWithValues: data.map { ($0.key.uuidString, $0.value) })
    }

    private static func milliseconds(_ duration: Duration) -> UInt32 {
        let (seconds, attoseconds) = duration.components
        let total = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return UInt32(clamping: max(0, total))
    }
}
