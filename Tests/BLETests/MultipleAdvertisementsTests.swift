import BLE
import BLESimulator
import Foundation
import Testing

/// Several advertisements at once (issue 22), on a private bus with the simulator: as many as
/// the adapter has instances, each with a lifetime of its own, registered again after a
/// bluetoothd restart.
@Suite("Several advertisements", .timeLimit(.minutes(1)))
struct MultipleAdvertisementsTests {
    @Test("up to the adapter's instances at once; one more is notPermitted; removing one frees it")
    func upToTheInstances() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            try await manager.startAdvertising(Advertisement(localName: "main"))
            var added: [AdvertisementHandle] = []
            for index in 1...4 {
                added.append(try await manager.addAdvertisement(Advertisement(localName: "ad\(index)")))
            }
            #expect(
                Set(fixture.simulator.advertisements.compactMap(\.localName)) == ["main", "ad1", "ad2", "ad3", "ad4"])
            #expect(await manager.addedAdvertisements == added)
            let full = await #expect(throws: BLEError.self) {
                _ = try await manager.addAdvertisement(Advertisement(localName: "ad5"))
            }
            #expect(full?.code == .notPermitted)
            #expect(await manager.addedAdvertisements == added, "the refused one is not kept")

            try await manager.removeAdvertisement(added[1])
            #expect(!fixture.simulator.advertisements.contains { $0.localName == "ad2" })
            let again = try await manager.addAdvertisement(Advertisement(localName: "ad6"))
            #expect(await manager.addedAdvertisements == [added[0], added[2], added[3], again])
            try await manager.stopAdvertising()
            #expect(await !manager.isAdvertising)
            #expect(fixture.simulator.advertisements.count == 4, "the added ones go on")
        }
    }

    @Test("an added advertisement's Timeout ends it alone, with its handle")
    func ownLifetime() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let events = manager.events
            try await manager.startAdvertising(Advertisement(localName: "main"))
            let lasting = try await manager.addAdvertisement(Advertisement(localName: "lasting"))
            let brief = try await manager.addAdvertisement(Advertisement(localName: "brief", timeout: 1))
            let stopped = try await nextEvent(events, within: .seconds(30)) {
                if case .advertisementStopped = $0 { true } else { false }
            }
            guard case .advertisementStopped(let handle)? = stopped else {
                Issue.record("no advertisementStopped")
                return
            }
            #expect(handle == brief)
            #expect(await manager.addedAdvertisements == [lasting])
            #expect(await manager.isAdvertising)
            #expect(Set(fixture.simulator.advertisements.compactMap(\.localName)) == ["main", "lasting"])
        }
    }

    @Test("bluetoothd restarting forgets them; the manager registers every one again")
    func republished() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let events = manager.events
            try await manager.startAdvertising(Advertisement(localName: "main"))
            _ = try await manager.addAdvertisement(Advertisement(localName: "second"))
            try await fixture.simulator.restartDaemon(downtime: .milliseconds(100))
            #expect(try await nextEvent(events) { if case .republished = $0 { true } else { false } } != nil)
            #expect(Set(fixture.simulator.advertisements.compactMap(\.localName)) == ["main", "second"])
        }
    }
}
