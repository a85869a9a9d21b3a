import BlueZ
import Foundation

/// The AD structures a virtual peripheral's advertisement carries, as (type, data): what an
/// advertisement monitor's patterns are matched against.
enum AdvertisingStructures {
    static func of(_ definition: VirtualPeripheral) -> [(type: UInt8, data: Data)] {
        var out: [(UInt8, Data)] = [(0x01, Data([definition.discoverable ? 0x06 : 0x04]))]
        var short: [UInt8] = []
        var long: [UInt8] = []
        for text in definition.serviceUUIDs {
            guard let bytes = BlueZUUID.advertisedBytes(text) else { continue }
            if bytes.count == 2 { short += bytes } else { long += bytes }
        }
        if !short.isEmpty { out.append((0x03, Data(short))) }
        if !long.isEmpty { out.append((0x07, Data(long))) }
        for (uuid, data) in Daemon.serviceData(definition).sorted(by: { $0.key < $1.key }) {
            guard let bytes = BlueZUUID.advertisedBytes(uuid) else { continue }
            out.append((bytes.count == 2 ? 0x16 : 0x21, Data(bytes) + data))
        }
        if let name = definition.name { out.append((0x09, Data(name.utf8))) }
        if let power = definition.txPower { out.append((0x0A, Data([UInt8(bitPattern: Int8(clamping: power))]))) }
        for (company, data) in definition.manufacturerData.sorted(by: { $0.key < $1.key }) {
            out.append((0xFF, Data([UInt8(company & 0xFF), UInt8(company >> 8)]) + data.data))
        }
        for (type, data) in definition.advertisingData.sorted(by: { $0.key < $1.key }) { out.append((type, data.data)) }
        return out
    }
}
