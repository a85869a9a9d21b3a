import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// What advertising reports do to device objects (bluez-dbus-api.md §1.4, §3.5–§3.7, §12,
/// §13.1, Q9, Q12, Q13).
@Suite("Fidelity: discovery reports", .timeLimit(.minutes(1)))
struct DiscoveryReportFidelityTests {
    private static let le: [String: DBusValue] = ["Transport": .string("le")]

    private static func isChange(_ entry: TranscriptEntry, _ path: ObjectPath, _ property: String) -> Bool {
        entry.isPropertiesChanged(path, BlueZInterface.device1) && entry.changedProperties[property] != nil
    }

    @Test("A new device appears with one InterfacesAdded holding its advertising data", arguments: Release.allCases)
    func deviceAppears(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.startDiscovery()
            let added = try await client.waitForDevice(Paths.sensor)
            #expect(added.path == .root)
            #expect(added.objectManagerInterfaces == Trace.gdbus(BlueZInterface.device1))
            let properties = try #require(added.addedProperties(of: BlueZInterface.device1))
            var types: [String: String] = [
                "Address": "s", "AddressType": "s", "Name": "s", "Alias": "s", "Paired": "b", "Bonded": "b",
                "Trusted": "b", "Blocked": "b", "LegacyPairing": "b", "RSSI": "n", "Connected": "b", "UUIDs": "as",
                "Adapter": "o", "ManufacturerData": "a{qv}", "ServiceData": "a{sv}", "TxPower": "n",
                "ServicesResolved": "b",
            ]
            if release == .bluez587 {
                // CablePairing ≥5.83; AdvertisingFlags no longer experimental ≥5.78.
                types["CablePairing"] = "b"
                types["AdvertisingFlags"] = "ay"
            }
            #expect(TreeValue.signatures(properties) == types)
            #expect(properties["Address"] == .string(Peripherals.sensorAddress))
            #expect(properties["AddressType"] == .string("public"))
            #expect(properties["Name"] == .string("HRM"))
            #expect(properties["Alias"] == .string("HRM"))
            #expect(properties["RSSI"] == .int16(-60))
            #expect(properties["TxPower"] == .int16(-4))
            #expect(properties["Adapter"] == .objectPath(Paths.adapter))
            #expect(
                properties["ManufacturerData"]
                    == .dictionary(
                        key: .uint16, value: .variant,
                        [DBusDictionaryEntry(.uint16(0x004c), .variant(.bytes(Data([0x02, 0x15]))))]
                    ))
            #expect(
                properties["ServiceData"]
                    == .dictionary(
                        key: .string, value: .variant,
                        [DBusDictionaryEntry(.string(UUIDs.battery), .variant(.bytes(Data([0x64]))))]))
            // Service-data UUIDs join UUIDs from 5.69 (add_service_data → device_add_eir_uuids).
            let uuids = release == .bluez587 ? [UUIDs.heartRate, UUIDs.battery] : [UUIDs.heartRate]
            #expect(properties["UUIDs"] == .array(.string, uuids.map { .string($0) }))
            if release == .bluez587 {
                // LE General Discoverable | BR/EDR Not Supported.
                #expect(properties["AdvertisingFlags"] == .bytes(Data([0x06])))
            }
            #expect(properties["Connected"] == .boolean(false))
            #expect(properties["ServicesResolved"] == .boolean(false))

            // Later reports with the same data change nothing; a new manufacturer value is the
            // first PropertiesChanged, carrying the whole dict.
            let mark = client.transcript.mark
            try simulator.updatePeripheral(address: Peripherals.sensorAddress) {
                $0.manufacturerData[0x004c] = [0x02, 0x16]
            }
            let change = try await client.transcript.first("ManufacturerData change", since: mark) {
                Self.isChange($0, Paths.sensor, "ManufacturerData")
            }
            #expect(
                change.description
                    == Trace.changed(
                        Paths.sensor, BlueZInterface.device1, "'ManufacturerData': <{uint16 76: <[byte 0x02, 0x16]>}>"))
            let sinceMark = client.transcript.since(mark)
            let index = try #require(sinceMark.firstIndex { Self.isChange($0, Paths.sensor, "ManufacturerData") })
            #expect(!sinceMark[..<index].contains { $0.path == Paths.sensor })
            // A new company id accumulates: the dict holds both.
            let mark2 = client.transcript.mark
            try simulator.updatePeripheral(address: Peripherals.sensorAddress) { $0.manufacturerData[0x0059] = [0x07] }
            let both = try await client.transcript.first("second company id", since: mark2) {
                Self.isChange($0, Paths.sensor, "ManufacturerData")
            }
            #expect(
                both.changedProperties["ManufacturerData"]
                    == .dictionary(
                        key: .uint16, value: .variant,
                        [
                            DBusDictionaryEntry(.uint16(0x004c), .variant(.bytes(Data([0x02, 0x16])))),
                            DBusDictionaryEntry(.uint16(0x0059), .variant(.bytes(Data([0x07])))),
                        ]))
        }
    }

    @Test(
        "Without a filter, LE advertisers lacking the discoverable flag get no object (Q13)",
        arguments: Release.allCases)
    func nonDiscoverableHiddenWithoutFilter(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor(), Peripherals.beacon()]) {
            simulator, client, _ in
            try await client.startDiscovery()
            try await client.waitForDevice(Paths.sensor)
            try await client.awaitReportRound(simulator)
            let tree = try await client.managedObjects()
            #expect(tree.objects[Paths.sensor] != nil)
            #expect(tree.objects[Paths.beacon] == nil)
            #expect(!client.transcript.entries.contains { $0.objectManagerSubject == Paths.beacon })
        }
    }

    @Test("With a filter, non-discoverable advertisers get objects too", arguments: Release.allCases)
    func nonDiscoverableShownWithFilter(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor(), Peripherals.beacon()]) { _, client, _ in
            #expect(await client.setDiscoveryFilter(Self.le) == nil)
            try await client.startDiscovery()
            try await client.waitForDevice(Paths.beacon)
            try await client.waitForDevice(Paths.sensor)
        }
    }

    @Test("A filter set while discovering applies to the running session", arguments: Release.allCases)
    func filterWhileDiscovering(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor(), Peripherals.beacon()]) { _, client, _ in
            try await client.startDiscovery()
            try await client.waitForDevice(Paths.sensor)
            #expect(await client.setDiscoveryFilter(Self.le) == nil)
            try await client.waitForDevice(Paths.beacon)
        }
    }

    @Test(
        "A filter of only defaults is a regular discovery from 5.67: the discoverable rule stays",
        arguments: Release.allCases)
    func defaultsOnlyFilter(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor(), Peripherals.beacon()]) {
            simulator, client, _ in
            // merge_discovery_filters (≥5.67, commit de8e7cfce) treats a filter without UUIDs,
            // RSSI, Pathloss, Pattern, DuplicateData=true and a non-default Transport as none.
            #expect(
                await client.setDiscoveryFilter(["Transport": .string("auto"), "DuplicateData": .boolean(false)]) == nil
            )
            try await client.startDiscovery()
            try await client.waitForDevice(Paths.sensor)
            try await client.awaitReportRound(simulator)
            let beaconSeen = try await client.managedObjects().objects[Paths.beacon] != nil
            #expect(beaconSeen == (release == .bluez566))
        }
    }

    @Test("UUID, RSSI and Pattern filters select devices", arguments: Release.allCases)
    func filtersSelect(release: Release) async throws {
        var weak = Peripherals.sensor()
        weak.address = "C4:00:00:00:00:02"
        weak.name = "Weak"
        weak.rssi = -90
        weak.serviceUUIDs = ["180F"]
        weak.serviceData = [:]
        let weakPath = Paths.path("/org/bluez/hci0/dev_C4_00_00_00_00_02")
        try await Fidelity.run(release, peripherals: [Peripherals.sensor(), weak]) { simulator, client, _ in
            // UUIDs: only the heart-rate advertiser.
            #expect(await client.setDiscoveryFilter(["UUIDs": .array(.string, [.string("180d")])]) == nil)
            try await client.startDiscovery()
            try await client.waitForDevice(Paths.sensor)
            try await client.awaitReportRound(simulator)
            #expect(try await client.managedObjects().objects[weakPath] == nil)
            try await client.stopDiscovery()

            // RSSI: only the one at least as strong as -70 dBm.
            let mark = client.transcript.mark
            #expect(await client.setDiscoveryFilter(["RSSI": .int16(-70)]) == nil)
            try await client.startDiscovery()
            // The sensor is known (connectable, kept after StopDiscovery); its RSSI comes back.
            try await client.transcript.first("sensor RSSI", since: mark) { Self.isChange($0, Paths.sensor, "RSSI") }
            #expect(try await client.managedObjects().objects[weakPath] == nil)
            try await client.stopDiscovery()

            // Pattern: address prefix (or name prefix) selects the weak one.
            let mark2 = client.transcript.mark
            #expect(await client.setDiscoveryFilter(["Pattern": .string("Weak")]) == nil)
            try await client.startDiscovery()
            try await client.waitForDevice(weakPath, since: mark2)
            try await client.awaitReportRound(simulator, address: weak.address, path: weakPath)
            #expect(!client.transcript.since(mark2).contains { Self.isChange($0, Paths.sensor, "RSSI") })
        }
    }

    @Test(
        "Pattern matches the address case-sensitively on 5.66, case-insensitively on 5.87", arguments: Release.allCases)
    func patternAddressCase(release: Release) async throws {
        // Its name matches the pattern in both releases (names always compare with strncmp).
        var sentinel = Peripherals.sensor()
        sentinel.address = "E0:00:00:00:00:03"
        sentinel.name = "d0:00 sentinel"
        let sentinelPath = Paths.path("/org/bluez/hci0/dev_E0_00_00_00_00_03")
        try await Fidelity.run(release, peripherals: [sentinel, Peripherals.beacon()]) { simulator, client, _ in
            #expect(await client.setDiscoveryFilter(["Pattern": .string("d0:00")]) == nil)
            try await client.startDiscovery()
            try await client.waitForDevice(sentinelPath)
            try await client.awaitReportRound(simulator, address: sentinel.address, path: sentinelPath)
            let beaconSeen = try await client.managedObjects().objects[Paths.beacon] != nil
            #expect(beaconSeen == (release == .bluez587))
        }
    }

    @Test(
        "RSSI changes below 8 dBm are not reported without a filter, every change with one", arguments: Release.allCases
    )
    func rssiThreshold(release: Release) async throws {
        for filtered in [false, true] {
            try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
                if filtered { #expect(await client.setDiscoveryFilter(Self.le) == nil) }
                try await client.startDiscovery()
                try await client.waitForDevice(Paths.sensor)
                // -60 → -55 together with new manufacturer data, so the report is seen.
                var mark = client.transcript.mark
                try simulator.updatePeripheral(address: Peripherals.sensorAddress) {
                    $0.rssi = -55
                    $0.manufacturerData[0x004c] = [0x03]
                }
                var change = try await client.transcript.first("change", since: mark) {
                    Self.isChange($0, Paths.sensor, "ManufacturerData")
                }
                #expect(change.changedProperties["RSSI"] == (filtered ? .int16(-55) : nil), "filtered: \(filtered)")
                // -60 → -52 (Δ8 from the last reported value -60) is reported either way.
                mark = client.transcript.mark
                try simulator.updatePeripheral(address: Peripherals.sensorAddress) {
                    $0.rssi = filtered ? -47 : -52
                    $0.manufacturerData[0x004c] = [0x04]
                }
                change = try await client.transcript.first("change", since: mark) {
                    Self.isChange($0, Paths.sensor, "ManufacturerData")
                }
                let keys = change.changedProperties.keys.sorted()
                #expect(keys == ["ManufacturerData", "RSSI"], "filtered: \(filtered)")
                #expect(change.changedProperties["RSSI"] == .int16(filtered ? -47 : -52))
            }
        }
    }

    @Test(
        "DuplicateData=true: one PropertiesChanged per report, dicts cleared and re-added", arguments: Release.allCases)
    func duplicateData(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            #expect(await client.setDiscoveryFilter(["DuplicateData": .boolean(true)]) == nil)
            try await client.startDiscovery()
            try await client.waitForDevice(Paths.sensor)
            let reports = try await client.transcript.count(3, "repeated reports") {
                Self.isChange($0, Paths.sensor, "ManufacturerData")
            }
            let first = reports[0].changedProperties
            #expect(reports.allSatisfy { $0.changedProperties["ManufacturerData"] == first["ManufacturerData"] })
            #expect(reports.allSatisfy { $0.changedProperties["ServiceData"] == first["ServiceData"] })
            // A company id no longer advertised leaves the dict (cleared per report).
            let mark = client.transcript.mark
            try simulator.updatePeripheral(address: Peripherals.sensorAddress) {
                $0.manufacturerData = [0x0059: [0x01]]
            }
            let swapped = try await client.transcript.first("new company only", since: mark) {
                Self.isChange($0, Paths.sensor, "ManufacturerData")
                    && $0.changedProperties["ManufacturerData"]
                        == .dictionary(
                            key: .uint16, value: .variant,
                            [DBusDictionaryEntry(.uint16(0x0059), .variant(.bytes(Data([0x01]))))])
            }
            #expect(swapped.kind == .signal)
        }
    }

    @Test(
        "StopDiscovery: RSSI/TxPower invalidated, non-connectable temporaries removed, then Discovering=false",
        arguments: Release.allCases)
    func stopDiscoveryCleanup(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor(), Peripherals.beacon()]) { _, client, _ in
            #expect(await client.setDiscoveryFilter(Self.le) == nil)
            try await client.startDiscovery()
            try await client.waitForDevice(Paths.sensor)
            try await client.waitForDevice(Paths.beacon)
            let mark = client.transcript.mark
            try await client.stopDiscovery()
            #expect(
                client.transcript.lines(since: mark, kinds: [.reply, .signal]) == [
                    Trace.reply("StopDiscovery"),
                    Trace.changed(Paths.sensor, BlueZInterface.device1, invalidated: ["RSSI", "TxPower"]),
                    Trace.changed(Paths.beacon, BlueZInterface.device1, invalidated: ["RSSI"]),
                    Trace.removed(Paths.beacon, Trace.gdbus(BlueZInterface.device1)),
                    Trace.changed(Paths.adapter, BlueZInterface.adapter1, "'Discovering': <false>"),
                ])
            // Advertising data other than RSSI/TxPower stays on the kept device.
            let device = try await client.getAll(Paths.sensor, BlueZInterface.device1)
            #expect(device["ManufacturerData"] != nil)
            #expect(device["RSSI"] == nil)
        }
    }

    @Test(
        "Temporary devices expire TemporaryTimeout after the last report; reports restart the timer",
        arguments: Release.allCases)
    func temporaryExpiry(release: Release) async throws {
        var options = SimulatorOptions()
        options.temporaryTimeout = .milliseconds(300)
        try await Fidelity.run(release, options: options, peripherals: [Peripherals.sensor()]) { _, client, _ in
            #expect(await client.setDiscoveryFilter(["DuplicateData": .boolean(true)]) == nil)
            try await client.startDiscovery()
            try await client.waitForDevice(Paths.sensor)
            // 40 reports at 20 ms are well past the timeout: each one restarted the timer.
            try await client.transcript.count(40, "reports") { Self.isChange($0, Paths.sensor, "ManufacturerData") }
            #expect(!client.transcript.entries.contains { $0.member == "InterfacesRemoved" })
            let mark = client.transcript.mark
            try await client.stopDiscovery()
            let removed = try await client.transcript.first("expiry", since: mark) {
                $0.member == "InterfacesRemoved" && $0.objectManagerSubject == Paths.sensor
            }
            #expect(removed.description == Trace.removed(Paths.sensor, Trace.gdbus(BlueZInterface.device1)))
        }
    }
}
