import BlueZ
import Foundation
import Testing

@testable import BLE
@testable import DBus

/// The scan's filter and duplicate rule as transcripts over a mirror, without a bus: each step
/// applies a signal to the tree, then asks the reporter what it reports.
@Suite struct ScanReporterTests {
    static let adapter = ObjectPath(unchecked: "/org/bluez/hci0")
    static let path = ObjectPath(unchecked: "/org/bluez/hci0/dev_D0_B1_E5_00_00_01")
    static let time = Date(timeIntervalSince1970: 1_000)

    /// A mirror and a reporter, fed one signal at a time.
    struct Transcript {
        var tree = BlueZObjectTree()
        var reporter: ScanReporter

        init(_ options: ScanOptions = ScanOptions(), services: [BluetoothUUID] = []) {
            reporter = ScanReporter(
                request: ScanRequest(services: services, options: options),
                adapter: AdapterIdentity(name: "hci0", address: nil))
        }

        /// The device appears (`InterfacesAdded`) with `properties`.
        mutating func added(_ properties: [String: DBusValue]) -> Discovery? {
            var all: [String: DBusValue] = [
                "Address": .string("D0:B1:E5:00:00:01"), "AddressType": .string("random"), "UUIDs": .array(.string, []),
                "Adapter": .objectPath(ScanReporterTests.adapter),
            ]
            all.merge(properties) { $1 }
            _ = tree.apply(.interfacesAdded(ScanReporterTests.path, [BlueZInterface.device1: all]))
            return reporter.consider(ScanReporterTests.path, in: tree, at: ScanReporterTests.time)
        }

        /// A `PropertiesChanged` of the device, as the scan hands it over.
        mutating func changed(_ changed: [String: DBusValue]) -> Discovery? {
            _ = tree.apply(
                .propertiesChanged(ScanReporterTests.path, BlueZInterface.device1, changed: changed, invalidated: []))
            return reporter.changed(
                ScanReporterTests.path, keys: changed.keys.sorted(), invalidated: [], in: tree,
                at: ScanReporterTests.time)
        }
    }

    static func manufacturer(_ bytes: [UInt8]) -> DBusValue {
        .dictionary(
            key: .uint16, value: .variant, [DBusDictionaryEntry(.uint16(0x004C), .variant(.bytes(Data(bytes))))])
    }

    @Test("a device is reported once; its RSSI alone, or its data re-sent unchanged, is a duplicate")
    func duplicates() throws {
        var scan = Transcript()
        let firstRead = scan.added(["RSSI": .int16(-60), "ManufacturerData": Self.manufacturer([1, 2])])
        let first = try #require(firstRead)
        #expect(first.rssi == -60)
        #expect(first.advertisement.manufacturerData == [0x004C: Data([1, 2])])
        #expect(first.timestamp == Self.time)
        #expect(scan.changed(["RSSI": .int16(-70)]) == nil)
        #expect(scan.changed(["RSSI": .int16(-50), "ManufacturerData": Self.manufacturer([1, 2])]) == nil)
        // New data is a new advertisement, with the RSSI the mirror holds.
        let secondRead = scan.changed(["ManufacturerData": Self.manufacturer([3])])
        let second = try #require(secondRead)
        #expect(second.advertisement.manufacturerData == [0x004C: Data([3])])
        #expect(second.rssi == -50)
        #expect(scan.changed(["RSSI": .int16(-40)]) == nil)
    }

    @Test("duplicates allowed: every advertisement is reported, with its own RSSI and the data it carries")
    func duplicatesAllowed() throws {
        var options = ScanOptions()
        options.allowDuplicates = true
        var scan = Transcript(options)
        #expect(scan.added(["RSSI": .int16(-60), "ManufacturerData": Self.manufacturer([1])]) != nil)
        #expect(scan.changed(["RSSI": .int16(-61)])?.rssi == -61)
        let resentRead = scan.changed(["RSSI": .int16(-62), "ManufacturerData": Self.manufacturer([1])])
        let resent = try #require(resentRead)
        #expect(resent.rssi == -62)
        #expect(resent.advertisement.manufacturerData == [0x004C: Data([1])])
        let changedRead = scan.changed(["RSSI": .int16(-63), "ManufacturerData": Self.manufacturer([9])])
        let changed = try #require(changedRead)
        #expect(changed.advertisement.manufacturerData == [0x004C: Data([9])])
        #expect(scan.changed(["Name": .string("beacon")])?.name == "beacon")
    }

    @Test("an RSSI below the threshold is not reported; crossing it with the same data reports it once")
    func threshold() throws {
        var options = ScanOptions()
        options.rssiThreshold = -70
        var scan = Transcript(options)
        #expect(scan.added(["RSSI": .int16(-80), "ManufacturerData": Self.manufacturer([1])]) == nil)
        #expect(scan.changed(["RSSI": .int16(-90)]) == nil)
        #expect(scan.changed(["RSSI": .int16(-60)])?.rssi == -60)
        #expect(scan.changed(["RSSI": .int16(-50)]) == nil)
    }

    @Test("data that changed while the device was filtered out is reported when its RSSI lets it through")
    func changedWhileFiltered() throws {
        var options = ScanOptions()
        options.rssiThreshold = -70
        var scan = Transcript(options)
        #expect(scan.added(["RSSI": .int16(-60), "ManufacturerData": Self.manufacturer([1])]) != nil)
        #expect(scan.changed(["RSSI": .int16(-90)]) == nil)
        // Too weak to report, but the advertisement is new.
        #expect(scan.changed(["ManufacturerData": Self.manufacturer([2])]) == nil)
        let backRead = scan.changed(["RSSI": .int16(-60)])
        let back = try #require(backRead)
        #expect(back.advertisement.manufacturerData == [0x004C: Data([2])])
    }

    @Test("a device first seen without an RSSI is reported on its first RSSI")
    func firstRSSI() throws {
        var scan = Transcript()
        #expect(scan.added(["Name": .string("quiet")]) == nil)
        let discoveryRead = scan.changed(["RSSI": .int16(-55)])
        let discovery = try #require(discoveryRead)
        #expect(discovery.name == "quiet")
        #expect(discovery.rssi == -55)
    }

    @Test("a service filter holds for the RSSI path as for the decoding")
    func serviceFilter() throws {
        let wanted = BluetoothUUID(0x180D)
        var scan = Transcript(services: [wanted])
        #expect(
            scan.added(["RSSI": .int16(-60), "UUIDs": .array(.string, [.string(BluetoothUUID(0x180F).description)])])
                == nil)
        #expect(scan.changed(["RSSI": .int16(-50)]) == nil)
        let foundRead = scan.changed(["UUIDs": .array(.string, [.string(wanted.description)])])
        let found = try #require(foundRead)
        #expect(found.advertisement.serviceUUIDs == [wanted])
    }

    @Test("a device forgotten (removed) is reported again when it comes back")
    func forgotten() throws {
        var scan = Transcript()
        #expect(scan.added(["RSSI": .int16(-60)]) != nil)
        #expect(scan.changed(["RSSI": .int16(-61)]) == nil)
        scan.reporter.forget(Self.path)
        #expect(scan.changed(["RSSI": .int16(-62)])?.rssi == -62)
    }
}
