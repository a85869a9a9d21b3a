import BlueZ
import DBus
import Testing

@Suite struct DiscoveryFilterTests {
    @Test func encodesBleaksFilterWithExactTypes() throws {
        let filter = DiscoveryFilter(
            uuids: ["0000180d-0000-1000-8000-00805f9b34fb"], rssi: -80, pathloss: nil, transport: .le,
            duplicateData: false)
        #expect(
            filter.dictionary == [
                "UUIDs": Fixture.strings(["0000180d-0000-1000-8000-00805f9b34fb"]), "RSSI": .int16(-80),
                "Transport": .string("le"), "DuplicateData": .boolean(false),
            ])
        #expect(filter.dbusValue.type == .dictionary(key: .string, value: .variant))
        try filter.dbusValue.validate()
        #expect(try DiscoveryFilter(dictionary: ObjectManagerCoding.decodeProperties(filter.dbusValue)) == filter)
        try filter.validate()
    }

    @Test func pathlossMustBeUInt16() {
        // bleak sends `n` here and bluetoothd answers InvalidArguments (§2.2).
        let error = #expect(throws: DBusError.self) {
            try DiscoveryFilter(dictionary: Fixture.variants(["Pathloss": .int16(60)]))
        }
        #expect(error?.code == .typeMismatch)
        #expect(error?.message == "SetDiscoveryFilter.Pathloss: expected q, got n")
    }

    @Test func unknownKeysAreRejected() {
        let error = #expect(throws: DBusError.self) {
            try DiscoveryFilter(dictionary: Fixture.variants(["Transport": .string("le"), "Bogus": .boolean(true)]))
        }
        #expect(error?.code == .invalidValue)
    }

    @Test func emptyFilter() throws {
        #expect(try DiscoveryFilter(dictionary: [:]) == DiscoveryFilter())
        #expect(DiscoveryFilter().dictionary.isEmpty)
    }

    @Test(arguments: [
        DiscoveryFilter(rssi: -128), DiscoveryFilter(rssi: 21), DiscoveryFilter(pathloss: 138),
        DiscoveryFilter(rssi: -60, pathloss: 60), DiscoveryFilter(transport: DiscoveryTransport(rawValue: "LE")),
    ])
    func valueRules(_ filter: DiscoveryFilter) {
        let error = #expect(throws: DBusError.self) { try filter.validate() }
        #expect(error?.code == .invalidValue)
    }

    @Test func filterKeyLists() {
        #expect(
            DiscoveryFilter.keys566 == [
                "UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern",
            ])
        #expect(DiscoveryFilter.keys583.last == "AutoConnect")
        let full = DiscoveryFilter(
            uuids: [], rssi: 20, transport: .auto, duplicateData: true, discoverable: true, pattern: "C4:7C",
            autoConnect: true)
        #expect(Set(full.dictionary.keys) == Set(DiscoveryFilter.keys583).subtracting(["Pathloss"]))
    }
}
