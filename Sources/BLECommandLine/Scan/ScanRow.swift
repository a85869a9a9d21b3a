import BLE
import Foundation

/// What the scan shows of one device, in every output style.
struct ScanRow: Sendable, Equatable {
    var name: String
    var address: String
    var rssi: Int16
    var services: String
    var manufacturer: String

    init(name: String, address: String, rssi: Int16, services: String = "", manufacturer: String = "") {
        self.name = name
        self.address = address
        self.rssi = rssi
        self.services = services
        self.manufacturer = manufacturer
    }

    init(_ discovery: Discovery) {
        name = discovery.name ?? ""
        address = discovery.id.address
        rssi = discovery.rssi
        services = discovery.advertisement.serviceUUIDs.map(Describe.uuid).joined(separator: ", ")
        manufacturer = discovery.advertisement.manufacturerData.sorted { $0.key < $1.key }
            .map { Describe.manufacturer($0.key, $0.value) }.joined(separator: "; ")
    }

    /// One line for a pipe: `C4:7C:8D:6A:11:22  -58 dBm  "Polar H10"  services: …  manufacturer: …`.
    var plainLine: String {
        var fields = [address, "\(rssi) dBm", name.isEmpty ? "(no name)" : "\"\(name)\""]
        if !services.isEmpty { fields.append("services: \(services)") }
        if !manufacturer.isEmpty { fields.append("manufacturer: \(manufacturer)") }
        return fields.joined(separator: "  ")
    }
}

/// One scan report as a JSON object (`ble scan --json`, one per line).
struct ScanRecord: JSONLineRecord {
    var time: String
    var adapter: String
    var address: String
    var name: String?
    var rssi: Int16
    var txPower: Int16?
    var services: [String]
    var serviceNames: [String: String]
    var manufacturerData: [String: String]
    var serviceData: [String: String]

    init(_ discovery: Discovery) {
        let advertisement = discovery.advertisement
        time = Describe.timestamp(discovery.timestamp)
        adapter = discovery.id.adapter
        address = discovery.id.address
        name = discovery.name
        rssi = discovery.rssi
        txPower = advertisement.txPower
        services = advertisement.serviceUUIDs.map(\.description)
        var names: [String: String] = [:]
        for uuid in advertisement.serviceUUIDs { names[uuid.description] = uuid.name }
        serviceNames = names
        var manufacturer: [String: String] = [:]
        for (company, data) in advertisement.manufacturerData {
            manufacturer[Describe.companyID(company)] = ValueFormat.hex(data).replacingOccurrences(of: " ", with: "")
        }
        manufacturerData = manufacturer
        var serviceData: [String: String] = [:]
        for (uuid, data) in advertisement.serviceData {
            serviceData[uuid.description] = ValueFormat.hex(data).replacingOccurrences(of: " ", with: "")
        }
        self.serviceData = serviceData
    }
}
