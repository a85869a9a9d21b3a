import BLE
import BLESimulator
import Foundation
import Testing

/// Advertising: what bluetoothd parses from the exported LEAdvertisement1, stopping,
/// replacing, Release on Timeout, and what the adapter cannot do.
@Suite("PeripheralManager: advertising")
struct PeripheralManagerAdvertisingTests {
    static let full = Advertisement(
        localName: "swift-ble", serviceUUIDs: ["180D"], solicitUUIDs: ["1812"],
        manufacturerData: [0x004C: Data([1, 2])],
        serviceData: ["180D": Data([9])], appearance: 0x0341, includes: [.txPower], isDiscoverable: true,
        discoverableTimeout: 30, duration: 2, timeout: 60, minInterval: .milliseconds(100),
        maxInterval: .milliseconds(200), secondaryChannel: .twoM)

    @Test("startAdvertising registers an advertisement bluetoothd parses field by field")
    func advertises() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            try await manager.startAdvertising(Self.full)
            #expect(await manager.isAdvertising)
            let advertisement = try #require(fixture.simulator.advertisements.first)
            #expect(advertisement.type == .peripheral)
            #expect(advertisement.localName == "swift-ble")
            #expect(advertisement.serviceUUIDs == [BluetoothUUID("180D").uuidString])
            #expect(advertisement.solicitUUIDs == [BluetoothUUID("1812").uuidString])
            #expect(advertisement.manufacturerData == [0x004C: Data([1, 2])])
            #expect(advertisement.serviceData == [BluetoothUUID("180D").uuidString: Data([9])])
            #expect(advertisement.appearance == 0x0341)
            #expect(advertisement.includes == ["tx-power"])
            #expect(advertisement.discoverable)
            #expect(advertisement.discoverableTimeout == 30)
            #expect(advertisement.duration == 2)
            #expect(advertisement.timeout == 60)
            #expect(advertisement.minInterval == 100)
            #expect(advertisement.maxInterval == 200)
            #expect(advertisement.secondaryChannel == "2M")
        }
    }

    @Test("Advertising again replaces the advertisement; stopAdvertising unregisters it")
    func replaceAndStop() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            try await manager.startAdvertising(Advertisement(localName: "one"))
            try await manager.startAdvertising(Advertisement(kind: .broadcast, localName: "two"))
            #expect(fixture.simulator.advertisements.map(\.localName) == ["two"])
            #expect(fixture.simulator.advertisements.first?.type == .broadcast)
            try await manager.stopAdvertising()
            #expect(fixture.simulator.advertisements.isEmpty)
            #expect(await !manager.isAdvertising)
            try await manager.stopAdvertising()
        }
    }

    @Test("a Release that overtakes RegisterAdvertisement's answer still ends the advertising")
    func releasedBeforeTheAnswer() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            // The answer comes after the 1-second Timeout expired: Release arrives first.
            fixture.simulator.inject(SimulatedFault(.registerAdvertisement, action: .delay(.milliseconds(1500))))
            try await expectBriefAdvertisementEnds(fixture, manager)
            // Usable afterwards: a new advertisement registers and stops normally.
            try await manager.startAdvertising(Advertisement(localName: "again"))
            #expect(await manager.isAdvertising)
            try await manager.stopAdvertising()
        }
    }

    @Test("When the Timeout expires bluetoothd calls Release: advertisingStopped")
    func releasedOnTimeout() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            try await expectBriefAdvertisementEnds(fixture, manager)
        }
    }

    /// Advertises with a 1-second `Timeout` and expects bluetoothd's Release to end it.
    private func expectBriefAdvertisementEnds(_ fixture: SimulatorFixture, _ manager: PeripheralManager) async throws {
        let events = manager.events
        try await manager.startAdvertising(Advertisement(localName: "brief", timeout: 1))
        let stopped = try await nextEvent(events, within: .seconds(30)) {
            if case .advertisingStopped = $0 { true } else { false }
        }
        #expect(stopped != nil)
        #expect(await !manager.isAdvertising)
        #expect(fixture.simulator.advertisements.isEmpty)
    }

    @Test("What the adapter does not list is notSupported; what bluetoothd cannot parse is invalidArguments")
    func refusals() async throws {
        try await SimulatorFixture.withManager(profile: .v5_66) { fixture, manager in
            // 5.66 has no SupportedFeatures, so no CanSetTxPower.
            let txPower = await bleError { try await manager.startAdvertising(Advertisement(txPower: 4)) }
            #expect(txPower?.code == .notSupported)
            let invalid: [Advertisement] = [
                Advertisement(kind: .broadcast, isDiscoverable: true),
                Advertisement(manufacturerData: [0x004C: Data()]),
                Advertisement(discoverableTimeout: 10, timeout: 5),
                Advertisement(minInterval: .milliseconds(200), maxInterval: .milliseconds(100)),
                Advertisement(minInterval: .milliseconds(10)),
                Advertisement(serviceUUIDs: [BluetoothUUID("xyz")]),
            ]
            for advertisement in invalid {
                let error = await bleError { try await manager.startAdvertising(advertisement) }
                #expect(error?.code == .invalidArguments)
            }
            #expect(fixture.simulator.advertisements.isEmpty)
        }
        try await SimulatorFixture.withManager(profile: .v5_87) { fixture, manager in
            try await manager.startAdvertising(Advertisement(localName: "loud", txPower: 4))
            #expect(fixture.simulator.advertisements.first?.txPower == 4)
        }
    }
}
