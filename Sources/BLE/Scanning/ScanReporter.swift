import BlueZ
import DBus
import Foundation

/// Decides which device changes a scan reports (its client-side filter and duplicate rule).
/// Pure: the mirror it reads and the time a report carries come in as arguments.
///
/// It keeps what each device advertised when last decoded, so that a device advertising again
/// with nothing new but its RSSI (most of what a scan receives, and every report of a scan that
/// allows duplicates, where bluetoothd re-sends the device's manufacturer and service data
/// with each one) is decided without decoding the device again.
struct ScanReporter {
    let request: ScanRequest
    let adapter: AdapterIdentity
    private var seen: [ObjectPath: Seen] = [:]

    /// What a device advertised when last decoded, and what of it was last reported.
    private struct Seen {
        var id: PeripheralID
        var advertisement: AdvertisementData
        /// `ManufacturerData` and `ServiceData` as the mirror held them then, which a change
        /// re-sending them is compared with (kept when duplicates are allowed).
        var manufacturerData: DBusValue?
        var serviceData: DBusValue?
        /// What the last report of the device carried, which a duplicate equals.
        var reported: AdvertisementData?
    }

    static let advertisementKeys: Set<String> = [
        "RSSI", "ManufacturerData", "ServiceData", "TxPower", "Name", "UUIDs", "AdvertisingData", "Appearance",
    ]

    private typealias Key = DeviceProperties.Key

    init(request: ScanRequest, adapter: AdapterIdentity) {
        self.request = request
        self.adapter = adapter
    }

    /// The device at `path` as `tree` holds it, decoded: its discovery, or nil when it is
    /// filtered out, a duplicate, not advertising in this discovery (no RSSI), or not a device.
    mutating func consider(_ path: ObjectPath, in tree: BlueZObjectTree, at time: Date) -> Discovery? {
        guard let properties = tree.properties(at: path, interface: BlueZInterface.device1),
            let device = try? DeviceAdvertisement(properties: properties)
        else { return nil }
        // The raw data is kept only where bluetoothd re-sends it unchanged (duplicates allowed:
        // DuplicateData); otherwise a change carrying it is new data, decoded anyway.
        let keepsRaw = request.options.allowDuplicates
        let index = seen.index(forKey: path)
        var entry = Seen(
            id: PeripheralID(adapter: adapter, address: device.address, type: device.addressType),
            advertisement: AdvertisementData(device),
            manufacturerData: keepsRaw ? properties[Key.manufacturerData] : nil,
            serviceData: keepsRaw ? properties[Key.serviceData] : nil,
            reported: index.flatMap { seen.values[$0].reported })
        var discovery: Discovery?
        if let rssi = device.rssi { discovery = Self.report(&entry, rssi: rssi, at: time, request: request) }
        // Moved in, at the index found above for a device seen before: no copy, no second look-up.
        if let index { seen.values[index] = consume entry } else { seen[path] = consume entry }
        return discovery
    }

    /// The device at `path` changed `keys` and invalidated `invalidated`: when that is its RSSI,
    /// and its manufacturer or service data re-sent as they were, it is decided with the
    /// advertisement last decoded; else as ``consider(_:in:at:)`` decides.
    mutating func changed(
        _ path: ObjectPath, keys: [String], invalidated: [String], in tree: BlueZObjectTree, at time: Date
    ) -> Discovery? {
        guard invalidated.isEmpty, let index = seen.index(forKey: path),
            let properties = tree.properties(at: path, interface: BlueZInterface.device1),
            case .int16(let rssi)? = properties[Key.rssi],
            Self.onlyRepeats(keys, of: seen.values[index], in: properties)
        else { return consider(path, in: tree, at: time) }
        return Self.report(&seen.values[index], rssi: rssi, at: time, request: request)
    }

    /// Whether `keys` are the RSSI, and manufacturer or service data equal to what `entry`
    /// was decoded from.
    private static func onlyRepeats(_ keys: [String], of entry: Seen, in properties: [String: DBusValue]) -> Bool {
        keys.allSatisfy { key in
            switch key {
            case Key.rssi: true
            case Key.manufacturerData: properties[key] == entry.manufacturerData
            case Key.serviceData: properties[key] == entry.serviceData
            default: false
            }
        }
    }

    mutating func forget(_ path: ObjectPath) { seen[path] = nil }

    private static func report(
        _ entry: inout Seen, rssi: Int16, at time: Date, request: ScanRequest
    ) -> Discovery? {
        if !request.services.isEmpty && Set(entry.advertisement.serviceUUIDs).isDisjoint(with: request.services) {
            return nil
        }
        if let threshold = request.options.rssiThreshold, rssi < threshold { return nil }
        if let prefix = request.options.namePrefix, !(entry.advertisement.localName?.hasPrefix(prefix) ?? false) {
            return nil
        }
        if !request.options.allowDuplicates, entry.reported == entry.advertisement { return nil }
        entry.reported = entry.advertisement
        return Discovery(id: entry.id, rssi: rssi, advertisement: entry.advertisement, timestamp: time)
    }
}
