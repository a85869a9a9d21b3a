import BlueZ
import Foundation

/// What a peripheral sends to an active scanner that asks for more after its advertisement:
/// 31 more bytes of AD structures on a legacy advertisement (``Advertisement/scanResponse``).
///
/// bluetoothd takes scan-response data from release 5.80 on: the typed fields (UUIDs,
/// manufacturer and service data) only when it runs with `--experimental`, raw AD structures
/// (``data``) always; earlier releases ignore it without an error. The manager checks which
/// applies to the daemon it talks to and refuses, with ``BLEError/Code/notSupported``, data the
/// daemon would drop unseen.
public struct ScanResponse: Sendable, Hashable {
    /// `ScanResponseServiceUUIDs`.
    public var serviceUUIDs: [BluetoothUUID]
    /// `ScanResponseSolicitUUIDs`.
    public var solicitUUIDs: [BluetoothUUID]
    /// `ScanResponseManufacturerData`: company identifier → non-empty data.
    public var manufacturerData: [UInt16: Data]
    /// `ScanResponseServiceData`.
    public var serviceData: [BluetoothUUID: Data]
    /// `ScanResponseData`: raw AD structures by AD type, for the types bluetoothd does not
    /// build itself (not flags, names, UUID lists, service or manufacturer data).
    public var data: [UInt8: Data]

    /// Creates scan-response data.
    public init(
        serviceUUIDs: [BluetoothUUID] = [], solicitUUIDs: [BluetoothUUID] = [], manufacturerData: [UInt16: Data] = [:],
        serviceData: [BluetoothUUID: Data] = [:], data: [UInt8: Data] = [:]
    ) {
        self.serviceUUIDs = serviceUUIDs
        self.solicitUUIDs = solicitUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.data = data
    }

    /// Whether any of the typed fields (experimental in bluetoothd) is set.
    var hasTypedFields: Bool {
        !serviceUUIDs.isEmpty || !solicitUUIDs.isEmpty || !manufacturerData.isEmpty || !serviceData.isEmpty
    }

    /// Writes the fields into the exported properties; empty ones are left out.
    func export(into out: inout LEAdvertisementProperties) {
        out.scanResponseServiceUUIDs = Advertisement.exported(serviceUUIDs)
        out.scanResponseSolicitUUIDs = Advertisement.exported(solicitUUIDs)
        out.scanResponseManufacturerData = manufacturerData.isEmpty ? nil : manufacturerData
        out.scanResponseServiceData = Advertisement.exported(serviceData)
        out.scanResponseData = data.isEmpty ? nil : data
    }
}

/// Whether the daemon takes scan-response data, from what it shows on D-Bus: bluetoothd does
/// not publish its version, so two facts stand in for it. `Adapter1.Connectable` exists from
/// 5.79 on (the properties arrived in 5.80: a 5.79 daemon is taken for one that has them), and
/// an `AdvertisementMonitorManager1` on the adapter means `--experimental` (every release gates
/// that interface behind it).
struct ScanResponseSupport: Sendable, Hashable {
    /// The daemon parses `ScanResponse…` properties (≥ 5.80).
    var knowsProperties: Bool
    /// It runs with `--experimental`, which the typed ones need.
    var experimental: Bool

    /// Throws ``BLEError/Code/notSupported`` when the daemon would drop `response` unseen.
    func check(_ response: ScanResponse) throws(BLEError) {
        guard knowsProperties else {
            throw BLEError(
                .notSupported,
                message: "this bluetoothd (before 5.80) ignores scan-response data; advertise it in the advertisement, "
                    + "or use bluetoothd 5.80 or newer")
        }
        if response.hasTypedFields && !experimental {
            throw BLEError(
                .notSupported,
                message: "bluetoothd takes scan-response UUIDs, manufacturer and service data only when run with "
                    + "--experimental; raw AD structures (ScanResponse.data) need no flag")
        }
    }
}
