import BlueZ
import DBus
import Foundation
import Testing

@testable import BLE

/// ``AdvertisementData`` keeps its fields in shared storage: copies must still behave as values.
@Suite struct AdvertisementDataTests {
    private static func advertisement(name: String) throws -> AdvertisementData {
        let properties: [String: DBusValue] = [
            "Address": .string("C4:7C:8D:6A:11:22"), "UUIDs": .array(.string, [.string("180d")]),
            "Name": .string(name), "TxPower": .int16(-8),
            "ManufacturerData": .dictionary(
                key: .uint16, value: .variant, [DBusDictionaryEntry(.uint16(0x004C), .variant(.bytes(Data([2, 21]))))]),
        ]
        return AdvertisementData(try DeviceAdvertisement(properties: properties))
    }

    @Test func aCopySetIsItsOwn() throws {
        let original = try Self.advertisement(name: "Flower care")
        var copy = original
        copy.localName = "Renamed"
        copy.manufacturerData[0x0059] = Data([1])
        #expect(original.localName == "Flower care")
        #expect(original.manufacturerData == [0x004C: Data([2, 21])])
        #expect(copy.localName == "Renamed")
        #expect(copy.manufacturerData == [0x004C: Data([2, 21]), 0x0059: Data([1])])
        #expect(copy.txPower == -8 && copy.serviceUUIDs == original.serviceUUIDs)
        #expect(copy != original)
    }

    @Test func equalFieldsAreEqualWhateverTheirStorage() throws {
        let first = try Self.advertisement(name: "Flower care")
        let second = try Self.advertisement(name: "Flower care")
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        var changedBack = first
        changedBack.txPower = nil
        changedBack.txPower = -8
        #expect(changedBack == first && Set([first, second, changedBack]).count == 1)
        #expect(try Self.advertisement(name: "Other") != first)
    }
}
