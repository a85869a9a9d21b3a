import BlueZ
import DBus
import Foundation

/// Parses an advertisement object's properties the way `parse_advertisement` does
/// (bluez-dbus-api.md §6.2); any failure is `Failed "Failed to parse advertisement."`.
///
/// Pure: the reason is kept for tests and debugging only, bluetoothd does not send it.
enum AdvertisementParser {
    /// Why a parse failed.
    struct Failure: Error, Sendable, Hashable {
        var reason: String
    }

    /// `SupportedIncludes` of the simulated controller.
    static let supportedIncludes = ["tx-power", "appearance", "local-name"]
    /// `SupportedSecondaryChannels` of the simulated controller.
    static let secondaryChannels = ["1M", "2M", "Coded"]

    /// AD types bluetoothd builds from other properties, refused in `Data` (`type_reject_list`).
    static let reservedDataTypes = ReservedADTypes.all

    /// The `ScanResponse…` properties, which bluetoothd parses from 5.80 on: the typed ones only
    /// with `--experimental` (`parsers[]` of `src/advertising.c`).
    static let typedScanResponseKeys: Set<String> = [
        LEAdvertisementProperties.Key.scanResponseServiceUUIDs, LEAdvertisementProperties.Key.scanResponseSolicitUUIDs,
        LEAdvertisementProperties.Key.scanResponseManufacturerData,
        LEAdvertisementProperties.Key.scanResponseServiceData,
    ]

    /// What of `properties` the daemon reads at all: an older or non-experimental bluetoothd
    /// skips the scan-response properties it has no parser for, without an error.
    static func understood(
        _ properties: [String: DBusValue], profile: BlueZProfile, experimental: Bool
    ) -> [String: DBusValue] {
        properties.filter { key, _ in
            if key == LEAdvertisementProperties.Key.scanResponseData { return profile.scanResponseProperties }
            if typedScanResponseKeys.contains(key) { return profile.scanResponseProperties && experimental }
            return true
        }
    }

    /// Parses `GetAll("org.bluez.LEAdvertisement1")`, variants unwrapped.
    static func parse(_ properties: [String: DBusValue]) throws(Failure) -> LEAdvertisementProperties {
        let advertisement: LEAdvertisementProperties
        do throws(DBusError) {
            advertisement = try LEAdvertisementProperties(properties: properties)
        } catch {
            throw Failure(reason: error.message)
        }
        try validate(advertisement)
        return advertisement
    }

    /// The checks beyond types.
    static func validate(_ ad: LEAdvertisementProperties) throws(Failure) {
        guard ad.type == .broadcast || ad.type == .peripheral else { throw Failure(reason: "unknown Type") }
        let uuids =
            (ad.serviceUUIDs ?? []) + (ad.solicitUUIDs ?? []) + (ad.scanResponseServiceUUIDs ?? [])
            + (ad.scanResponseSolicitUUIDs ?? []) + Array((ad.serviceData ?? [:]).keys)
            + Array((ad.scanResponseServiceData ?? [:]).keys)
        guard uuids.allSatisfy({ BlueZUUID.canonical($0) != nil }) else { throw Failure(reason: "invalid UUID") }
        let manufacturer =
            Array((ad.manufacturerData ?? [:]).values) + Array((ad.scanResponseManufacturerData ?? [:]).values)
        guard manufacturer.allSatisfy({ !$0.isEmpty }) else { throw Failure(reason: "empty ManufacturerData") }
        let dataTypes = Array((ad.data ?? [:]).keys) + Array((ad.scanResponseData ?? [:]).keys)
        guard dataTypes.allSatisfy({ !reservedDataTypes.contains($0) }) else {
            throw Failure(reason: "Data holds an AD type bluetoothd builds itself")
        }
        if ad.type == .broadcast && ad.discoverable == true {
            throw Failure(reason: "broadcast advertisements cannot be discoverable")
        }
        if let discoverableTimeout = ad.discoverableTimeout, let timeout = ad.timeout, timeout > 0,
            discoverableTimeout > timeout
        {
            throw Failure(reason: "DiscoverableTimeout exceeds Timeout")
        }
        if let channel = ad.secondaryChannel, !secondaryChannels.contains(channel) {
            throw Failure(reason: "unknown SecondaryChannel")
        }
        try validateIntervals(ad)
        if let txPower = ad.txPower, !(-127...20).contains(txPower) { throw Failure(reason: "TxPower out of range") }
    }

    /// Intervals are milliseconds, converted to 0.625 ms units that must lie in 0x20…0xFFFFFF.
    private static func validateIntervals(_ ad: LEAdvertisementProperties) throws(Failure) {
        for interval in [ad.minInterval, ad.maxInterval].compactMap({ $0 }) {
            let units = UInt64(interval) * 8 / 5
            guard (0x20...0xFF_FFFF).contains(units) else { throw Failure(reason: "interval out of range") }
        }
        if let minimum = ad.minInterval, let maximum = ad.maxInterval, minimum > maximum {
            throw Failure(reason: "MinInterval exceeds MaxInterval")
        }
    }
}
