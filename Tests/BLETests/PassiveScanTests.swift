import BLE
import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

@testable import BLE

/// Passive scanning (``ScanOptions/passive``) on a private bus with the simulator: an
/// advertisement monitor instead of discovery, offered only by an experimental bluetoothd.
@Suite("Passive scanning", .timeLimit(.minutes(1)))
struct PassiveScanTests {
    static let heartRate = SimulatorFixture.heartRateAddress
    static let battery = "C4:7C:8D:6A:11:44"

    static var peripherals: [VirtualPeripheral] {
        var battery = VirtualPeripheral(address: Self.battery, name: "Battery")
        battery.serviceUUIDs = ["180F"]
        battery.advertisingIntervalMs = 20
        return [SimulatorFixture.heartRateMonitor(), battery]
    }

    static var experimental: SimulatorOptions {
        var options = SimulatorOptions()
        options.experimental = true
        return options
    }

    static let passive = ScanOptions(passive: true)

    @Test("a passive scan reports the advertisers of its services, with no discovery, and unregisters at its end")
    func reportsWithoutDiscovery() async throws {
        try await SimulatorFixture.run(options: Self.experimental, peripherals: Self.peripherals) { fixture in
            let central = try await fixture.poweredCentral()
            let probe = try await BusProbe.open(fixture)
            defer { probe.close() }
            var scan = central.scan(services: [BluetoothUUID("180D")], options: Self.passive).makeAsyncIterator()
            let found = try #require(try await scan.next())
            #expect(found.id.address == Self.heartRate)
            #expect(found.advertisement.serviceUUIDs.contains(BluetoothUUID("180D")))
            #expect(try await probe.property(SimPath.adapter, "org.bluez.Adapter1", "Discovering") == .boolean(false))
            // The battery advertiser matches no monitor: bluetoothd makes no object for it.
            await #expect(throws: DBusError.self) {
                try await probe.call(
                    SimPath.device(Self.battery), "org.freedesktop.DBus.Properties", "GetAll",
                    [.string("org.bluez.Device1")])
            }
            #expect(fixture.simulator.activeMonitorCount == 1)
            // The scan ends with its iterator: the monitor is unregistered.
            scan = central.scan(services: [BluetoothUUID("180F")], options: Self.passive).makeAsyncIterator()
            #expect(try await scan.next()?.id.address == Self.battery, "a scan of its own, for its own services")
            try await eventually("the first scan's monitor is unregistered") {
                fixture.simulator.activeMonitorCount == 1
            }
            await central.close()
        }
    }

    @Test("without bluetoothd --experimental a passive scan fails with notSupported, saying so")
    func notSupportedWithoutExperimental() async throws {
        try await SimulatorFixture.run(peripherals: Self.peripherals) { fixture in
            let central = try await fixture.poweredCentral()
            var scan = central.scan(services: [BluetoothUUID("180D")], options: Self.passive).makeAsyncIterator()
            let error = await #expect(throws: BLEError.self) { _ = try await scan.next() }
            #expect(error?.code == .notSupported)
            #expect(error?.message.contains("--experimental") == true, "\(String(describing: error))")
            // The central stays usable: an active scan finds the monitor.
            #expect(try await first(central.scan()) { $0.id.address == Self.heartRate } != nil)
            await central.close()
        }
    }

    @Test("a passive scan needs services to match: invalidArguments, and the central stays usable")
    func needsServices() async throws {
        try await SimulatorFixture.run(options: Self.experimental, peripherals: Self.peripherals) { fixture in
            let central = try await fixture.poweredCentral()
            var scan = central.scan(options: Self.passive).makeAsyncIterator()
            let error = await #expect(throws: BLEError.self) { _ = try await scan.next() }
            #expect(error?.code == .invalidArguments)
            #expect(
                try await first(central.scan(services: [BluetoothUUID("180F")], options: Self.passive)) { _ in true }?
                    .id.address == Self.battery)
            await central.close()
        }
    }

    @Test("a passive scan's services are kept by state restoration, apart from an active scan's")
    func restored() async throws {
        try await StateRestorationTests.run(options: Self.experimental, peripherals: Self.peripherals) {
            fixture, directory in
            let first = try await fixture.central(options: StateRestorationTests.options(directory))
            try await first.waitUntilPoweredOn(timeout: .seconds(5))
            var scan = first.scan(services: [BluetoothUUID("180D")], options: Self.passive).makeAsyncIterator()
            _ = try await scan.next()
            await first.close()
            withExtendedLifetime(scan) {}
            let second = try await fixture.central(options: StateRestorationTests.options(directory))
            let restored = try #require(await second.restoredState)
            #expect(restored.passiveScanServices == [BluetoothUUID("180D")])
            #expect(restored.scanServices == nil)
            await second.close()
        }
    }

    @Test("the or-patterns of a 16-bit and a 128-bit service")
    func patterns() {
        let short = PassiveScanPatterns.patterns(for: [BluetoothUUID("180D")])
        #expect(short.count == 2 * PassiveScanPatterns.listedShortPositions + 1)
        #expect(short.contains(MonitorPattern(start: 0, adType: 0x03, content: Data([0x0D, 0x18]))))
        #expect(short.contains(MonitorPattern(start: 6, adType: 0x02, content: Data([0x0D, 0x18]))))
        #expect(short.contains(MonitorPattern(start: 0, adType: 0x16, content: Data([0x0D, 0x18]))))
        let long = PassiveScanPatterns.patterns(for: [BluetoothUUID("b0b00001-5b1e-4d2a-9f00-62656e636800")])
        #expect(long.map(\.adType) == [0x06, 0x07, 0x21])
        #expect(long.first?.content.first == 0x00 && long.first?.content.last == 0xB0, "least significant byte first")
        #expect((short + long).allSatisfy { $0.refusal == nil }, "every pattern is one bluetoothd takes")
    }

    @Test("patterns bluetoothd refuses, and matching at a position")
    func patternRules() {
        #expect(MonitorPattern(start: 0, adType: 0x50, content: Data([1])).refusal != nil)
        #expect(MonitorPattern(start: 30, adType: 0x03, content: Data([1, 2])).refusal != nil)
        #expect(MonitorPattern(start: 0, adType: 0x03, content: Data()).refusal != nil)
        #expect(MonitorPattern(start: 29, adType: 0xFF, content: Data([1, 2])).refusal == nil)
        let pattern = MonitorPattern(start: 2, adType: 0x03, content: Data([0x0D, 0x18]))
        #expect(pattern.matches(type: 0x03, data: Data([0x0F, 0x18, 0x0D, 0x18])))
        #expect(!pattern.matches(type: 0x03, data: Data([0x0D, 0x18, 0x0F, 0x18])))
        #expect(!pattern.matches(type: 0x02, data: Data([0x0F, 0x18, 0x0D, 0x18])))
        #expect(!pattern.matches(type: 0x03, data: Data([0x0F, 0x18, 0x0D])))
    }
}
