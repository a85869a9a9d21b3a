import BLE
import BLESimulator
import DBus
import Foundation
import Testing

/// `Central.scan(services:options:)`: filters, advertisement data, the shared discovery
/// session, and how a scan ends.
@Suite("Scanning", .timeLimit(.minutes(1)))
struct ScanTests {
    static let battery = "D1:00:00:00:00:0B"
    static let near = "D1:00:00:00:00:0C"
    static let far = "D1:00:00:00:00:0D"

    @Test("a service filter reports only peripherals advertising the service")
    func serviceFilter() async throws {
        let peripherals = [
            SimulatorFixture.heartRateMonitor(),
            TestPeripherals.advertiser(Self.battery, name: "Battery", services: ["180F"]),
        ]
        try await SimulatorFixture.run(peripherals: peripherals) { fixture in
            let central = try await fixture.poweredCentral()
            let options = ScanOptions(allowDuplicates: true)
            let found = try await collect(central.scan(services: [BluetoothUUID("180F")], options: options), count: 5)
            #expect(found.allSatisfy { $0.id.address == Self.battery })
            #expect(found.allSatisfy { $0.advertisement.serviceUUIDs.contains(BluetoothUUID("180F")) })
            await central.close()
        }
    }

    @Test("an RSSI threshold reports only peripherals at or above it")
    func rssiThreshold() async throws {
        let peripherals = [
            TestPeripherals.advertiser(Self.near, name: "Near", rssi: -40),
            TestPeripherals.advertiser(Self.far, name: "Far", rssi: -90),
        ]
        try await SimulatorFixture.run(peripherals: peripherals) { fixture in
            let central = try await fixture.poweredCentral()
            let options = ScanOptions(allowDuplicates: true, rssiThreshold: -70)
            let found = try await collect(central.scan(options: options), count: 5)
            #expect(found.allSatisfy { $0.id.address == Self.near })
            #expect(found.allSatisfy { $0.rssi >= -70 })
            await central.close()
        }
    }

    @Test("a name prefix reports only peripherals whose name starts with it")
    func namePrefix() async throws {
        let peripherals = [
            TestPeripherals.advertiser(Self.near, name: "Thermo-1"),
            TestPeripherals.advertiser(Self.far, name: "Other"),
            SimulatorFixture.heartRateMonitor(name: "Thermo"),
        ]
        try await SimulatorFixture.run(peripherals: peripherals) { fixture in
            let central = try await fixture.poweredCentral()
            let found = try await collect(
                central.scan(options: ScanOptions(allowDuplicates: true, namePrefix: "Thermo")), count: 6)
            #expect(found.allSatisfy { $0.name?.hasPrefix("Thermo") == true })
            #expect(Set(found.map(\.id.address)) == [Self.near, SimulatorFixture.heartRateAddress])
            await central.close()
        }
    }

    @Test("allowDuplicates reports every advertisement; without it a peripheral is reported once")
    func duplicates() async throws {
        var beacon = TestPeripherals.advertiser(Self.near, name: "Beacon")
        beacon.manufacturerData = [0x004C: HexData(Data([0x02, 0x15, 0x01]))]
        try await SimulatorFixture.run(peripherals: [beacon]) { fixture in
            let central = try await fixture.poweredCentral()
            let once = PosixMutex(0)
            let plain = central.scan()
            let plainScan = Task {
                for try await _ in plain { once.withLock { $0 += 1 } }
            }
            try await eventually("the plain scan reports the beacon") { once.withLock { $0 } == 1 }
            let every = try await collect(central.scan(options: ScanOptions(allowDuplicates: true)), count: 8)
            #expect(every.count == 8)
            #expect(every.allSatisfy { $0.id.address == Self.near })
            #expect(once.withLock { $0 } == 1, "the same advertisement again is no new discovery")
            plainScan.cancel()
            await central.close()
        }
    }

    @Test("advertisement data is parsed", arguments: [BlueZProfile.v5_66, .v5_87])
    func advertisementData(profile: BlueZProfile) async throws {
        var beacon = TestPeripherals.advertiser(Self.near, name: "Beacon", services: ["180D"], rssi: -55)
        beacon.manufacturerData = [0x004C: HexData(Data([0x02, 0x15, 0xAA])), 0x0059: HexData(Data([0x01]))]
        beacon.serviceData = ["FEAA": HexData(Data([0x10, 0x00, 0x03]))]
        beacon.txPower = -8
        beacon.appearance = 0x0341
        // Transport Discovery Data and a Broadcast Name, which bluetoothd passes on; Manufacturer
        // Data written here too, which it withholds (it decodes it into ManufacturerData).
        beacon.advertisingData = [
            0x26: HexData(Data([0x01, 0x02])), 0x30: HexData(Data("Gate".utf8)), 0xFF: HexData(Data([0x4C, 0x00])),
        ]
        try await SimulatorFixture.run(profile: profile, peripherals: [beacon]) { fixture in
            let central = try await fixture.poweredCentral()
            let discovery = try #require(try await first(central.scan()) { $0.id.address == Self.near })
            let advertisement = discovery.advertisement
            #expect(discovery.id == (try PeripheralID(adapter: "hci0", address: Self.near)))
            #expect(discovery.name == "Beacon")
            #expect(advertisement.localName == "Beacon")
            #expect(discovery.rssi == -55)
            #expect(advertisement.manufacturerData == [0x004C: Data([0x02, 0x15, 0xAA]), 0x0059: Data([0x01])])
            #expect(advertisement.serviceData == [BluetoothUUID("FEAA"): Data([0x10, 0x00, 0x03])])
            #expect(advertisement.serviceUUIDs.contains(BluetoothUUID("180D")))
            #expect(advertisement.txPower == -8)
            #expect(advertisement.appearance == 0x0341)
            #expect(advertisement.isConnectable == nil, "BlueZ does not say")
            // LE General Discoverable and BR/EDR Not Supported, where the daemon reports flags.
            #expect(advertisement.flags == (profile.advertisingFlags ? 0x06 : nil))
            // The AD structures BlueZ passes on undecoded, where it reports them (5.78 and later).
            let passedOn: [UInt8: Data] = [0x26: Data([0x01, 0x02]), 0x30: Data("Gate".utf8)]
            #expect(advertisement.raw == (profile.advertisingFlags ? passedOn : [:]))
            await central.close()
        }
    }

    @Test("two scans share one discovery; the last one leaving stops it")
    func sharedDiscovery() async throws {
        try await SimulatorFixture.run { fixture in
            let recorder = LogRecorder()
            let central = try await fixture.poweredCentral(options: tracing(recorder))
            let probe = try await BusProbe.open(fixture)
            let heartRate = PosixMutex(0)
            let everything = PosixMutex<Set<String>>([])
            let narrow = Task {
                for try await _ in central.scan(
                    services: [BluetoothUUID("180D")], options: ScanOptions(allowDuplicates: true))
                {
                    heartRate.withLock { $0 += 1 }
                }
            }
            let wide = Task {
                for try await discovery in central.scan() {
                    everything.withLock { _ = $0.insert(discovery.id.address) }
                }
            }
            try await eventually("both scans report") {
                heartRate.withLock { $0 } > 0 && !everything.withLock { $0 }.isEmpty
            }
            #expect(recorder.count("Adapter1.StartDiscovery") == 1, "one discovery session for both")
            #expect(try await probe.property(SimPath.adapter, "org.bluez.Adapter1", "Discovering") == .boolean(true))

            // The narrow scan leaves: the filter becomes the wide one's, discovery keeps running.
            let filters = recorder.count("SetDiscoveryFilter -> ", suffix: true)
            narrow.cancel()
            try await recorder.waitFor("SetDiscoveryFilter -> ", suffix: true, occurrence: filters + 1)
            #expect(try await probe.property(SimPath.adapter, "org.bluez.Adapter1", "Discovering") == .boolean(true))
            try fixture.simulator.addPeripheral(TestPeripherals.advertiser(Self.near, name: "Late"))
            try await eventually("the remaining scan sees a newcomer") {
                everything.withLock { $0 }.contains(Self.near)
            }
            #expect(recorder.count("Adapter1.StopDiscovery") == 0)

            // The last one leaves: discovery stops.
            wide.cancel()
            try await recorder.waitFor("StopDiscovery -> ", suffix: true)
            #expect(try await probe.property(SimPath.adapter, "org.bluez.Adapter1", "Discovering") == .boolean(false))
            probe.close()
            await central.close()
        }
    }

    @Test("cancelling the scanning task ends the sequence and stops discovery")
    func cancellationEndsScan() async throws {
        try await SimulatorFixture.run { fixture in
            let recorder = LogRecorder()
            let central = try await fixture.poweredCentral(options: tracing(recorder))
            let started = PosixMutex(false)
            let scanner = Task { () throws -> Int in
                var count = 0
                for try await _ in central.scan(options: ScanOptions(allowDuplicates: true)) {
                    count += 1
                    started.withLock { $0 = true }
                }
                return count
            }
            try await eventually("the scan reports") { started.withLock { $0 } }
            scanner.cancel()
            let count = try await scanner.value
            #expect(count > 0, "the loop ended normally, without an error")
            try await recorder.waitFor("StopDiscovery -> ", suffix: true)
            await central.close()
        }
    }

    @Test("the adapter powering off fails the scan with poweredOff")
    func powerOffDuringScan() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            let scan = central.scan()
            var iterator = scan.makeAsyncIterator()
            #expect(try await iterator.next()?.id.address == SimulatorFixture.heartRateAddress)
            fixture.simulator.setPowered(false)
            let error = await failure(of: &iterator)
            #expect(error?.code == .poweredOff)
            // Scanning again while off fails at once.
            var again = central.scan().makeAsyncIterator()
            #expect(await failure(of: &again)?.code == .poweredOff)
            await central.close()
        }
    }

    @Test("bluetoothd going away fails the scan with bluetoothUnavailable")
    func restartDuringScan() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            var iterator = central.scan().makeAsyncIterator()
            #expect(try await iterator.next() != nil)
            let restart = Task { try await fixture.simulator.restartDaemon(downtime: .milliseconds(200)) }
            let error = await failure(of: &iterator)
            #expect(error?.code == .bluetoothUnavailable)
            #expect(error?.isTransient == true)
            try await restart.value
            // After the restart, scanning works again.
            try await central.waitUntilPoweredOn(timeout: .seconds(10))
            #expect(try await first(central.scan()) { _ in true } != nil)
            await central.close()
        }
    }

    @Test("a slow consumer loses discoveries beyond the buffer, counted")
    func dropsCounted() async throws {
        let addresses = (0..<8).map { String(format: "D1:00:00:00:01:%02X", $0) }
        let peripherals = addresses.map { TestPeripherals.advertiser($0, name: "P\($0.suffix(2))") }
        try await SimulatorFixture.run(peripherals: peripherals) { fixture in
            let central = try await fixture.poweredCentral()
            let slow = central.scan(options: ScanOptions(bufferSize: 1))
            var iterator = slow.makeAsyncIterator()
            // Another scan of the same central sees the same events; once it has all of them,
            // the slow scan has had them too.
            let all = try await collect(central.scan(), count: addresses.count)
            #expect(Set(all.map(\.id.address)) == Set(addresses))
            try await eventually("the slow scan counts its drops") { slow.droppedCount == addresses.count - 1 }
            #expect(try await iterator.next() != nil, "the oldest discovery is kept")
            await central.close()
        }
    }
}
