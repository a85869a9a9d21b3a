import BlueZ
import Foundation

/// How many bytes of AD payload an advertisement's own data takes, as bluetoothd lays it out
/// (one AD structure per list, per service data and per manufacturer entry: a length byte, a
/// type byte and the data), against what the adapter can send.
///
/// Counted: service and solicited UUID lists, service data, manufacturer data. Left out: the
/// name (bluetoothd shortens it, or moves it to the scan response), and what bluetoothd or the
/// kernel adds themselves (flags, appearance, TX power): so an advertisement this refuses is
/// one bluetoothd would refuse too, with a less clear error.
enum AdvertisementLength {
    /// A legacy advertisement's payload.
    static let legacyLimit = 31

    /// The bytes counted for `data`, by part.
    static func parts(_ data: Advertisement) -> [(name: String, bytes: Int)] {
        parts(
            serviceUUIDs: data.serviceUUIDs, solicitUUIDs: data.solicitUUIDs, serviceData: data.serviceData,
            manufacturerData: data.manufacturerData, raw: [:])
    }

    /// The bytes counted for a scan response, by part.
    static func parts(_ response: ScanResponse) -> [(name: String, bytes: Int)] {
        parts(
            serviceUUIDs: response.serviceUUIDs, solicitUUIDs: response.solicitUUIDs, serviceData: response.serviceData,
            manufacturerData: response.manufacturerData, raw: response.data)
    }

    private static func parts(
        serviceUUIDs: [BluetoothUUID], solicitUUIDs: [BluetoothUUID], serviceData: [BluetoothUUID: Data],
        manufacturerData: [UInt16: Data], raw: [UInt8: Data]
    ) -> [(name: String, bytes: Int)] {
        func uuidLists(_ uuids: [BluetoothUUID]) -> Int {
            // One list per UUID size: 16-bit, 32-bit (short forms above 0xFFFF), 128-bit.
            var sizes: [Int: Int] = [:]
            for uuid in uuids { sizes[size(of: uuid), default: 0] += 1 }
            return sizes.reduce(0) { $0 + 2 + $1.key * $1.value }
        }
        var out: [(String, Int)] = []
        if !serviceUUIDs.isEmpty { out.append(("service UUIDs", uuidLists(serviceUUIDs))) }
        if !solicitUUIDs.isEmpty { out.append(("solicited UUIDs", uuidLists(solicitUUIDs))) }
        if !serviceData.isEmpty {
            out.append(("service data", serviceData.reduce(0) { $0 + 2 + size(of: $1.key) + $1.value.count }))
        }
        if !manufacturerData.isEmpty {
            out.append(("manufacturer data", manufacturerData.values.reduce(0) { $0 + 4 + $1.count }))
        }
        if !raw.isEmpty { out.append(("raw AD structures", raw.values.reduce(0) { $0 + 2 + $1.count })) }
        return out
    }

    /// The most `data` may take on an adapter with `manager`'s capabilities: 31 bytes for a
    /// legacy advertisement; with a secondary channel (extended advertising), what the adapter
    /// reports in `SupportedCapabilities.MaxAdvLen` when it reports it.
    static func limit(_ data: Advertisement, manager: LEAdvertisingManagerProperties) -> Int {
        guard data.secondaryChannel != nil, let maximum = manager.supportedCapabilities?.maxAdvertisingDataLength
        else { return legacyLimit }
        return max(legacyLimit, Int(maximum))
    }

    /// The most a scan response may take: 31 bytes, or the adapter's `MaxScnRspLen` with a
    /// secondary channel.
    static func scanResponseLimit(_ data: Advertisement, manager: LEAdvertisingManagerProperties) -> Int {
        guard data.secondaryChannel != nil, let maximum = manager.supportedCapabilities?.maxScanResponseLength
        else { return legacyLimit }
        return max(legacyLimit, Int(maximum))
    }

    /// Throws ``BLEError/Code/invalidArguments`` naming the parts when `data`, or its scan
    /// response, cannot fit.
    static func check(_ data: Advertisement, manager: LEAdvertisingManagerProperties) throws(BLEError) {
        try check(parts(data), limit: limit(data, manager: manager), what: "advertisement's data", data)
        if let response = data.scanResponse {
            try check(parts(response), limit: scanResponseLimit(data, manager: manager), what: "scan response", data)
        }
    }

    private static func check(
        _ parts: [(name: String, bytes: Int)], limit: Int, what: String, _ data: Advertisement
    ) throws(BLEError) {
        let total = parts.reduce(0) { $0 + $1.bytes }
        guard total > limit else { return }
        let list = parts.map { "\($0.name) \($0.bytes)" }.joined(separator: ", ")
        let kind = limit == legacyLimit ? "a legacy advertisement holds \(legacyLimit)" : "the adapter sends \(limit)"
        throw BLEError(
            .invalidArguments,
            message: "the \(what) takes \(total) bytes (\(list)); \(kind)"
                + (data.secondaryChannel == nil ? " (a secondary channel asks for extended advertising)" : ""))
    }

    private static func size(of uuid: BluetoothUUID) -> Int {
        guard let bytes = BlueZUUID.advertisedBytes(uuid.uuidString) else { return 16 }
        if bytes.count == 2 { return 2 }
        // A 32-bit UUID on the base UUID travels in 4 bytes.
        return uuid.uuidString.hasSuffix(BlueZUUID.baseSuffix) ? 4 : 16
    }
}
