import BlueZ
import DBus
import Foundation
import Testing

@testable import BLESimulator

/// Which `ScanResponse…` properties each simulated bluetoothd reads: none before 5.80, the raw
/// `ScanResponseData` from 5.80, the typed ones only with `--experimental` (`parsers[]`).
@Suite("Scan-response properties by release")
struct ScanResponseParsingTests {
    static let properties: [String: DBusValue] = [
        "Type": .string("peripheral"),
        "ScanResponseData": .dictionary(
            key: .byte, value: .variant, [DBusDictionaryEntry(.byte(0x24), .variant(.bytes(Data([0x16]))))]),
        "ScanResponseManufacturerData": .dictionary(
            key: .uint16, value: .variant, [DBusDictionaryEntry(.uint16(0x05F1), .variant(.bytes(Data([1]))))]),
        "LocalName": .string("x"),
    ]

    @Test("5.66 reads none of them, 5.87 the raw one, 5.87 --experimental all")
    func gating() throws {
        let old = AdvertisementParser.understood(Self.properties, profile: .v5_66, experimental: true)
        #expect(Set(old.keys) == ["Type", "LocalName"])
        let plain = AdvertisementParser.understood(Self.properties, profile: .v5_87, experimental: false)
        #expect(Set(plain.keys) == ["Type", "LocalName", "ScanResponseData"])
        let experimental = AdvertisementParser.understood(Self.properties, profile: .v5_87, experimental: true)
        #expect(Set(experimental.keys) == Set(Self.properties.keys))
        let parsed = try AdvertisementParser.parse(experimental)
        #expect(parsed.scanResponseManufacturerData == [0x05F1: Data([1])])
        #expect(parsed.scanResponseData == [0x24: Data([0x16])])
    }

    @Test("a raw entry of a type bluetoothd builds itself fails the whole advertisement, as type_reject_list does")
    func reservedTypes() {
        var properties = Self.properties
        properties["ScanResponseData"] = .dictionary(
            key: .byte, value: .variant, [DBusDictionaryEntry(.byte(0xFF), .variant(.bytes(Data([1]))))])
        #expect(throws: AdvertisementParser.Failure.self) { try AdvertisementParser.parse(properties) }
        #expect(ReservedADTypes.all.contains(0x2A) && !ReservedADTypes.all.contains(0x24))
    }
}
