import BLESimulator
import BlueZ
import DBus
import DBusTestSupport
import Foundation
import Testing

@testable import BLE

/// BlueZ keeps a subscription across link loss and arms it again at the next link (quirk Q7),
/// so an app that stops listening while the link is down must still be taken off bluetoothd's
/// list, or the peripheral keeps notifying for nobody after the reconnection.
@Suite("Unsubscribing while the link is down")
struct UnsubscribeWhileDisconnectedTests {
    static let sensor = TestPeripherals.sensorAddress

    @Test("the last subscriber leaving while disconnected sends StopNotify; the next link is not armed")
    func stopReachesBluetoothd() async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            let (central, peripheral) = try await fixture.connected(Self.sensor)
            let rate = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
            let probe = try await BusProbe.open(fixture)
            defer { probe.close() }
            let path = rate.path.rawValue
            var values: NotificationSequence.AsyncIterator? = try await rate.subscribe().makeAsyncIterator()
            try fixture.simulator.notify(address: Self.sensor, characteristic: "2A37", value: Data([0x42]))
            #expect(await values?.next() == Data([0x42]))

            try fixture.simulator.dropLink(address: Self.sensor)
            try await eventually("the link is down") { await !peripheral.isConnected }
            #expect(
                try await probe.property(path, BlueZInterface.gattCharacteristic1.rawValue, "Notifying")
                    == .boolean(true), "bluetoothd keeps the subscription across the loss")
            values = nil
            try await eventually("bluetoothd dropped the subscription") {
                try await probe.property(path, BlueZInterface.gattCharacteristic1.rawValue, "Notifying")
                    == .boolean(false)
            }

            _ = try await central.connect(try PeripheralID(address: Self.sensor), timeout: .seconds(10))
            #expect(
                try fixture.simulator.notify(address: Self.sensor, characteristic: "2A37", value: Data([0x43])) == 0,
                "nobody is subscribed at the next link")
            #expect(
                try await probe.property(path, BlueZInterface.gattCharacteristic1.rawValue, "Notifying")
                    == .boolean(false))
            await central.close()
        }
    }
}
