import BLE
import BLESimulator
import Foundation
import Testing

/// Scan-response data of a peripheral manager's advertisement, against the bluetoothd
/// releases that ignore it (5.66), take raw AD structures only (5.80+), or everything
/// (5.80+ with --experimental).
@Suite("Scan-response data")
struct ScanResponseTests {
    static let adapters = ["00:AA:01:00:00:00", "00:AA:01:01:00:01"]
    /// URI (0x24): an AD type bluetoothd does not build itself.
    static let uri = Data([0x16]) + Data("//swift-ble".utf8)

    static func options(experimental: Bool) -> SimulatorOptions {
        var options = SimulatorOptions()
        options.adapters = adapters
        options.experimental = experimental
        return options
    }

    @Test("bluetoothd before 5.80 would drop it unseen: the manager says so instead")
    func oldDaemon() async throws {
        try await SimulatorFixture.withManager(profile: .v5_66) { fixture, manager in
            let advertisement = Advertisement(localName: "old", scanResponse: ScanResponse(data: [0x24: Self.uri]))
            await expectCode(.notSupported) { try await manager.startAdvertising(advertisement) }
            #expect(fixture.simulator.advertisements.isEmpty)
            try await manager.startAdvertising(Advertisement(localName: "old"))
            #expect(fixture.simulator.advertisements.count == 1, "the manager goes on")
        }
    }

    @Test("without --experimental, raw AD structures go out and the typed fields are refused")
    func withoutExperimental() async throws {
        try await SimulatorFixture.withManager(profile: .v5_87) { fixture, manager in
            let typed = Advertisement(scanResponse: ScanResponse(manufacturerData: [0x05F1: Data([1, 2])]))
            await expectCode(.notSupported) { try await manager.startAdvertising(typed) }
            try await manager.startAdvertising(
                Advertisement(localName: "raw", scanResponse: ScanResponse(data: [0x24: Self.uri])))
            #expect(fixture.simulator.advertisements.first?.scanResponseData == [0x24: Self.uri])
        }
    }

    @Test("bad scan-response data is refused before bluetoothd sees it, naming what is wrong")
    func badInput() async throws {
        try await SimulatorFixture.withManager(profile: .v5_87, simulatorOptions: Self.options(experimental: true)) {
            fixture, manager in
            await expectCode(.invalidArguments) {
                try await manager.startAdvertising(Advertisement(scanResponse: ScanResponse(data: [0xFF: Data([1])])))
            }
            await expectCode(.invalidArguments) {
                try await manager.startAdvertising(
                    Advertisement(scanResponse: ScanResponse(manufacturerData: [0x05F1: Data()])))
            }
            do {
                try await manager.startAdvertising(
                    Advertisement(scanResponse: ScanResponse(manufacturerData: [0x05F1: Data(count: 28)])))
                Issue.record("32 bytes of scan response were taken")
            } catch let error as BLEError {
                #expect(error.code == .invalidArguments && error.message.contains("scan response takes 32 bytes"))
            }
            #expect(fixture.simulator.advertisements.isEmpty)
        }
    }

    @Test("with --experimental, an active scanner on the other adapter sees the scan response's data")
    func activeScanner() async throws {
        try await SimulatorFixture.run(profile: .v5_87, options: Self.options(experimental: true), peripherals: []) {
            fixture in
            let manager = try await PeripheralManager(bus: .address(fixture.bus.address), adapter: "hci1")
            try await manager.waitUntilPoweredOn(timeout: .seconds(10))
            try await manager.startAdvertising(
                Advertisement(
                    localName: "sr", serviceUUIDs: ["180D"],
                    scanResponse: ScanResponse(manufacturerData: [0x05F1: Data([0xCA, 0xFE])], data: [0x24: Self.uri])))
            let central = try await fixture.central()
            try await central.waitUntilPoweredOn(timeout: .seconds(5))
            let found = try await first(central.scan(services: ["180D"])) {
                $0.advertisement.manufacturerData[0x05F1] != nil
            }
            #expect(found?.advertisement.manufacturerData == [0x05F1: Data([0xCA, 0xFE])])
            #expect(found?.id.address == Self.adapters[1])
            await central.close()
            await manager.close()
        }
    }
}
