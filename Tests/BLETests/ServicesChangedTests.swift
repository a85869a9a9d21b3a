import BLE
import BLESimulator
import DBus
import Foundation
import Testing

/// BlueZ removing and adding a device's GATT objects: handles obtained before become invalid
/// with ``BLEError/Code/servicesChanged`` and an event says so (Core Bluetooth's
/// `didModifyServices`).
///
/// The simulator cannot change the database of a connected device in place (a Service Changed
/// indication); what it can do is what happens when a device is removed and found again with
/// a new database: every GATT object goes, then new ones come, possibly at the same paths.
@Suite("Services changed", .timeLimit(.minutes(1)))
struct ServicesChangedTests {
    static let sensor = TestPeripherals.sensorAddress

    /// A new database whose third characteristic has the path the old 2A38 had (handle 0x0f).
    static func newDatabase(_ peripheral: inout VirtualPeripheral) {
        peripheral.services = [
            VirtualService(
                uuid: "180D",
                characteristics: [
                    VirtualCharacteristic(uuid: "2A99", flags: ["read"], value: [0x99]),
                    VirtualCharacteristic(uuid: "2A98", flags: ["read"], value: [0x98]),
                    VirtualCharacteristic(uuid: "2A97", flags: ["read"], value: [0x97]),
                ])
        ]
    }

    static func remove(_ probe: BusProbe) async throws {
        try await probe.call(
            SimPath.adapter, "org.bluez.Adapter1", "RemoveDevice", [.objectPath(try ObjectPath(SimPath.device(sensor)))]
        )
    }

    @Test("objects removed while connected: handles fail with servicesChanged, the event tells, subscriptions end")
    func removedWhileConnected() async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            let (central, peripheral) = try await fixture.connected(Self.sensor)
            let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            let rate = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
            let values = try await rate.subscribe()
            let events = peripheral.events
            let probe = try await BusProbe.open(fixture)
            try await Self.remove(probe)
            #expect(try await first(events) { $0 == .servicesChanged } == .servicesChanged)
            #expect(await bleError { try await location.read() }?.code == .servicesChanged)
            var iterator = values.makeAsyncIterator()
            #expect(await iterator.next() == nil, "the subscription ended")
            probe.close()
            await central.close()
        }
    }

    @Test("a new database at the same paths: old handles stay invalid, rediscovery gives the new ones")
    func newDatabaseAtSamePaths() async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            let (central, peripheral) = try await fixture.connected(Self.sensor)
            let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            #expect(try await location.read() == Data([0x01]))
            try await peripheral.disconnect()

            // The peripheral gets a new firmware; bluetoothd forgets the device and finds it again.
            try fixture.simulator.updatePeripheral(address: Self.sensor, Self.newDatabase)
            let events = peripheral.events
            let probe = try await BusProbe.open(fixture)
            try await Self.remove(probe)
            #expect(try await first(events) { $0 == .servicesChanged } == .servicesChanged)
            try await eventually("the device is gone") { await central.knownPeripherals().isEmpty }
            let again = try await central.connect(peripheral.id, timeout: .seconds(10))
            #expect(again === peripheral)

            // The old handle does not silently reach the new characteristic at its path.
            #expect(await bleError { try await location.read() }?.code == .servicesChanged)
            let services = try await peripheral.discoverServices()
            #expect(
                services.flatMap(\.characteristics).map(\.uuid)
                    == ["2A05", "2A99", "2A98", "2A97"].map { BluetoothUUID($0) })
            #expect(await bleError { try await location.read() }?.code == .servicesChanged, "still, after rediscovery")
            let replacement = try await peripheral.characteristic(BluetoothUUID("2A97"), in: BluetoothUUID("180D"))
            #expect(replacement !== location)
            // What the simulator holds for it: `updatePeripheral` keeps the values of the old
            // database by position (so not yet 0x97), which the read must return.
            #expect(
                try await replacement.read()
                    == (try fixture.simulator.value(address: Self.sensor, characteristic: "2A97")))
            let gone = await bleError {
                try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            }
            #expect(gone?.code == .notFound)
            probe.close()
            await central.close()
        }
    }
}
