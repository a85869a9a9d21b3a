import BlueZ
import DBus
import Foundation

/// Decides which device changes a scan reports (its client-side filter and duplicate rule).
struct ScanReporter {
    let request: ScanRequest
    let adapter: AdapterIdentity
    private var reported: [ObjectPath: AdvertisementData] = [:]

    static let advertisementKeys: Set<String> = [
        "RSSI", "ManufacturerData", "ServiceData", "TxPower", "Name", "UUIDs", "AdvertisingData", "Appearance",
    ]

    init(request: ScanRequest, adapter: AdapterIdentity) {
        self.request = request
        self.adapter = adapter
    }

    mutating func consider(_ path: ObjectPath, in tree: BlueZObjectTree, advertised: Bool) -> Discovery? {
        guard advertised, let device = try? tree.advertisement(at: path), let rssi = device.rssi else { return nil }
        let advertisement = AdvertisementData(device)
        if !request.services.isEmpty && Set(advertisement.serviceUUIDs).isDisjoint(with: request.services) {
            return nil
        }
        if let threshold = request.options.rssiThreshold, rssi < threshold { return nil }
        if let prefix = request.options.namePrefix, !(advertisement.localName?.hasPrefix(prefix) ?? false) {
            return nil
        }
        // Stored and compared in one look-up: this runs for every advertisement.
        if let previous = reported.updateValue(advertisement, forKey: path), !request.options.allowDuplicates,
            previous == advertisement
        {
            return nil
        }
        return Discovery(
            id: PeripheralID(adapter: adapter, address: device.address, type: device.addressType), rssi: rssi,
            advertisement: advertisement, timestamp: Date())
    }

    mutating func forget(_ path: ObjectPath) { reported[path] = nil }
}
