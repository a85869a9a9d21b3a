import BLESimulator
import DBusTestSupport
import Foundation
import Testing

@testable import BLE

/// The bus itself going away (the private dbus-daemon killed) under a central that scans,
/// streams notifications and waits for a read: everything ends or fails with a typed error at
/// once, nothing waits for its deadline, and the central stays usable (it answers, and fails).
@Suite("The bus going away under a central and a peripheral manager", .timeLimit(.minutes(1)))
struct CentralBusLossTests {
    static let sensor = TestPeripherals.sensorAddress

    @Test("a scan, a notification stream and a pending read end; later calls fail at once")
    func everythingEnds() async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            let recorder = LogRecorder()
            let (central, peripheral) = try await fixture.connected(Self.sensor, options: tracing(recorder))
            let notifying = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            var scan = central.scan().makeAsyncIterator()
            #expect(try await scan.next() != nil)
            let values = try await notifying.subscribe()
            let events = peripheral.events
            // A read that bluetoothd holds back far past the test's own time limit.
            fixture.simulator.inject(SimulatedFault(.read, address: Self.sensor, action: .noReply))
            let read = Task { try await control.read(timeout: .seconds(600)) }
            try await recorder.waitFor("GattCharacteristic1.ReadValue")
            #expect(!central.isBusLost)

            fixture.bus.stop()

            let readError = await bleError { try await read.value }
            #expect(readError?.code == .bluetoothUnavailable)
            let scanError = await failure(of: &scan)
            #expect(scanError?.code == .bluetoothUnavailable)
            #expect(scanError?.message == "the system bus went away")
            #expect(scanError?.isTransient == true, "the central connects to the bus again when it is back")
            var received = 0
            for await _ in values { received += 1 }  // ends: nothing can re-arm it
            var sawDisconnect = false
            for await event in events {
                if case .disconnected(.bluetoothUnavailable) = event {
                    sawDisconnect = true
                    break
                }
            }
            #expect(sawDisconnect)
            #expect(central.isBusLost)
            // The central's state follows the session's news on its own actor: soon, not at once.
            try await eventually("the central is resetting") { await central.state == .resetting }

            // Later calls fail at once, not at their deadline: 600 s would outlast the time limit.
            let later = await bleError { try await control.read(timeout: .seconds(600)) }
            #expect(later?.code == .bluetoothUnavailable)
            var lateScan = central.scan().makeAsyncIterator()
            #expect(await failure(of: &lateScan)?.code == .bluetoothUnavailable)
            let connect = await bleError { try await central.connect(PeripheralID(address: Self.sensor)) }
            #expect(connect?.code == .bluetoothUnavailable)
            // An app that retries in a loop keeps getting the error: every call still hops to
            // the actors of a connection that is gone, and none may pile up on the stack.
            var codes: Set<BLEError.Code> = []
            for _ in 0..<20_000 {
                do throws(BLEError) {
                    _ = try await control.read()
                    codes.insert(.protocolError)  // a read that succeeded: it cannot
                } catch {
                    codes.insert(error.code)
                }
                _ = await central.state
            }
            #expect(codes == [.bluetoothUnavailable])
            await central.close()
        }
    }

    @Test("a publishing PeripheralManager learns it: resetting, its subscriptions end, calls fail at once")
    func peripheralManager() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let events = try await manager.publishHeartRate()
            try await fixture.simulator.remoteSubscribe(to: "2A37")
            _ = try await nextEvent(events) { if case .subscribed = $0 { true } else { false } }

            fixture.bus.stop()

            let unsubscribed = try await nextEvent(events) { if case .unsubscribed = $0 { true } else { false } }
            #expect(unsubscribed != nil, "the subscription died with the bus")
            try await eventually("the manager is resetting") { await manager.state == .resetting }
            let advertise = await bleError { try await manager.startAdvertising(Advertisement(localName: "x")) }
            #expect(advertise?.code == .bluetoothUnavailable)
            #expect(advertise?.message == "the system bus went away")
            let add = await bleError { try await manager.add(TestServices.battery) }
            #expect(add?.code == .bluetoothUnavailable)
        }
    }

    @Test("the bus coming back: the central follows the new bluetoothd, scans and connects again")
    func theBusComesBack() async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            let (central, peripheral) = try await fixture.connected(Self.sensor)
            let executor = await ObjectIdentifier(central.session.connection.executor)
            fixture.bus.crash()
            try await eventually("the central sees the bus go") { central.isBusLost }
            // The central's state follows the session's news on its own actor: soon, not at once.
            try await eventually("the central is resetting") { await central.state == .resetting }
            let away = await bleError { try await central.connect(PeripheralID(address: Self.sensor)) }
            #expect(away?.code == .bluetoothUnavailable)

            // The system bus restarts, and bluetoothd with it (on a new unique name).
            try fixture.bus.restart()
            let daemon = try await Simulator.start(
                on: .address(fixture.bus.address), peripherals: [TestPeripherals.sensor()])
            defer { daemon.stop() }
            try await central.waitUntilPoweredOn(timeout: .seconds(20))
            #expect(!central.isBusLost)
            let executorNow = await ObjectIdentifier(central.session.connection.executor)
            #expect(executorNow == executor, "the actors run where they ran")
            #expect(try await first(central.scan()) { $0.id.address == Self.sensor } != nil)
            let again = try await central.connect(PeripheralID(address: Self.sensor), timeout: .seconds(10))
            #expect(again === peripheral, "the same peripheral object, linked again")
            let value = try await again.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D")).read()
            #expect(value == (try daemon.value(address: Self.sensor, characteristic: "2A37")))
            try await again.disconnect()
            await central.close()
        }
    }

    @Test("the bus coming back: a PeripheralManager registers its services with the new bluetoothd")
    func aPeripheralManagerRegistersAgain() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let events = try await manager.publishHeartRate()
            fixture.bus.crash()
            try await eventually("the manager is resetting") { await manager.state == .resetting }
            try fixture.bus.restart()
            let daemon = try await Simulator.start(on: .address(fixture.bus.address), peripherals: [])
            defer { daemon.stop() }
            let republished = try await nextEvent(events, within: .seconds(20)) {
                if case .republished = $0 { true } else { false }
            }
            #expect(republished != nil)
            #expect(daemon.registeredApplications.first?.services.count == 1)
            #expect(daemon.advertisements.first?.localName == "swift-ble")
            #expect(await manager.state == .poweredOn)
            let value = try await daemon.remoteRead(characteristic: "2A38")
            #expect(value == Data([0x01, 0x02, 0x03]))
        }
    }
}
