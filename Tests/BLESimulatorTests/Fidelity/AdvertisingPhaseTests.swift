import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// Advertisers with the same interval do not send in lockstep (each has its own phase), and
/// a crowd is still reported in full.
@Suite("Fidelity: advertising phases", .timeLimit(.minutes(1)))
struct AdvertisingPhaseTests {
    /// `count` non-connectable beacons advertising every `intervalMs`.
    private static func crowd(_ count: Int, intervalMs: Int) -> [VirtualPeripheral] {
        (0..<count).map { index in
            var beacon = VirtualPeripheral(
                address: String(format: "D0:B1:E5:00:%02X:%02X", index >> 8, index & 0xff))
            beacon.addressType = "random"
            beacon.connectable = false
            beacon.advertisingIntervalMs = intervalMs
            beacon.manufacturerData = [0x004c: [0x02, 0x15, UInt8(index & 0xff)]]
            return beacon
        }
    }

    @Test("A crowd at one interval arrives spread over it, not as one burst, and every advertiser is reported")
    func crowdIsSpread() async throws {
        let count = 200
        try await Fidelity.run(.bluez566, peripherals: Self.crowd(count, intervalMs: 2_000)) { _, client, _ in
            let mark = client.transcript.mark
            try await client.startDiscovery()
            // Sampled while the first interval runs, a lockstep radio would show all or nothing.
            var samples: [Int] = []
            while samples.last ?? 0 < count {
                let devices = Set(
                    client.transcript.since(mark).filter { $0.member == "InterfacesAdded" }
                        .compactMap(\.objectManagerSubject))
                samples.append(devices.count)
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(samples.contains { $0 > 0 && $0 < count }, "reports came as one burst: \(samples)")
            #expect(samples.last == count)
        }
    }
}
