import BLE
import DBus
import Foundation
import Testing

@testable import BLE

/// A restored subscription whose characteristic disappeared while no process ran (the
/// peripheral's services changed): it is left out of the restored state and of the record,
/// and the reason is logged; the peripheral itself is restored.
@Suite("State restoration after a services change", .timeLimit(.minutes(1)))
struct RestorationServicesChangedTests {
    static let sensor = NotificationTests.sensor

    @Test("a subscribed characteristic that is gone is left out, with a warning naming it")
    func goneCharacteristicLeftOut() async throws {
        try await StateRestorationTests.run { fixture, directory in
            _ = try await StateRestorationTests.keepSensorSubscribed(fixture, directory)

            // A firmware update drops the heart rate measurement while no process runs: the
            // link goes, and bluetoothd forgets the device (its objects with it).
            try fixture.simulator.dropLink(address: Self.sensor)
            try fixture.simulator.updatePeripheral(address: Self.sensor) { definition in
                definition.services[0].characteristics.removeAll { $0.uuid == "2A37" }
            }
            let probe = try await BusProbe.open(fixture)
            defer { probe.close() }
            try await eventually("the link is down") {
                (try? await probe.property(SimPath.device(Self.sensor), "org.bluez.Device1", "Connected"))
                    == .boolean(false)
            }
            try await probe.call(
                SimPath.adapter, "org.bluez.Adapter1", "RemoveDevice",
                [.objectPath(try ObjectPath(SimPath.device(Self.sensor)))])

            let warnings = PosixMutex<[String]>([])
            var options = StateRestorationTests.options(directory)
            options.logger = BLELogger(level: .warning) { _, message, metadata in
                warnings.withLock { $0.append("\(message) \(metadata["characteristic"] ?? "")") }
            }
            let second = try await fixture.central(options: options)
            let restored = try #require(await second.restoredState)
            let kept = try #require(restored.peripherals.first)
            #expect(restored.peripherals.map(\.id.address) == [Self.sensor], "the peripheral is still kept")
            #expect(restored.subscriptions.isEmpty, "the link is down: subscribing waits for it")
            try await eventually("the peripheral is found again and reconnected") { await kept.state == .connected }
            try await eventually("the gone characteristic is reported") {
                warnings.withLock {
                    $0.contains { $0.contains("the characteristic is gone") && $0.lowercased().contains("2a37") }
                }
            }
            await second.close()

            let third = try await fixture.central(options: StateRestorationTests.options(directory))
            #expect(await third.restoredState?.subscriptions.isEmpty == true, "left out of the record too")
            #expect(await third.restoredState?.peripherals.count == 1)
            await third.close()
        }
    }
}
