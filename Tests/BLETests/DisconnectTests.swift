import BLE
import BLESimulator
import BlueZ
import Foundation
import Testing

/// Links going down: by request, by the peripheral, by the radio, by power or bluetoothd;
/// the reasons the events give, and what happens to operations in flight.
@Suite("Disconnecting", .timeLimit(.minutes(1)))
struct DisconnectTests {
    static let hrm = SimulatorFixture.heartRateAddress

    static func isDisconnect(_ event: ConnectionEvent) -> Bool {
        if case .disconnected = event { return true }
        return false
    }

    struct Drop: Sendable, CustomTestStringConvertible {
        var profile: BlueZProfile
        var reason: BlueZ.DisconnectReason
        var expected: BLE.DisconnectReason
        var testDescription: String { "\(profile.version) \(reason.name) → \(expected)" }
    }

    static let drops: [Drop] = [
        Drop(profile: .v5_87, reason: .remote, expected: .remote),
        Drop(profile: .v5_87, reason: .timeout, expected: .timeout),
        Drop(profile: .v5_87, reason: .authentication, expected: .authentication),
        Drop(profile: .v5_87, reason: .unknown, expected: .unknown),
        Drop(profile: .v5_66, reason: .remote, expected: .unknown),
        Drop(profile: .v5_66, reason: .timeout, expected: .unknown),
    ]

    @Test("a dropped link gives its reason where BlueZ says it (≥ 5.83), unknown before", arguments: drops)
    func dropReason(_ drop: Drop) async throws {
        try await SimulatorFixture.run(profile: drop.profile) { fixture in
            let (central, peripheral) = try await fixture.connected()
            let events = peripheral.events
            try fixture.simulator.dropLink(address: Self.hrm, reason: drop.reason)
            #expect(try await first(events, where: Self.isDisconnect) == .disconnected(drop.expected))
            #expect(await peripheral.state == .disconnected)
            #expect(await !peripheral.isConnected)
            await central.close()
        }
    }

    @Test("disconnect() gives a local disconnection", arguments: [BlueZProfile.v5_66, .v5_87])
    func localDisconnect(profile: BlueZProfile) async throws {
        try await SimulatorFixture.run(profile: profile) { fixture in
            let (central, peripheral) = try await fixture.connected()
            let events = peripheral.events
            try await peripheral.disconnect()
            #expect(try await first(events, where: Self.isDisconnect) == .disconnected(.local))
            let probe = try await BusProbe.open(fixture)
            #expect(
                try await probe.property(SimPath.device(Self.hrm), "org.bluez.Device1", "Connected") == .boolean(false))
            // Disconnecting again is a no-op.
            try await peripheral.disconnect()
            probe.close()
            await central.close()
        }
    }

    @Test("the adapter powering off ends the link with adapterPoweredOff", arguments: [BlueZProfile.v5_66, .v5_87])
    func powerOffWhileConnected(profile: BlueZProfile) async throws {
        try await SimulatorFixture.run(profile: profile) { fixture in
            let (central, peripheral) = try await fixture.connected()
            let events = peripheral.events
            fixture.simulator.setPowered(false)
            #expect(try await first(events, where: Self.isDisconnect) == .disconnected(.adapterPoweredOff))
            #expect(await central.state == .poweredOff)
            await central.close()
        }
    }

    @Test("bluetoothd going away ends the link with bluetoothUnavailable")
    func restartWhileConnected() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected()
            let events = peripheral.events
            let restart = Task { try await fixture.simulator.restartDaemon(downtime: .milliseconds(200)) }
            #expect(try await first(events, where: Self.isDisconnect) == .disconnected(.bluetoothUnavailable))
            try await restart.value
            // The same object connects again once bluetoothd is back.
            try await central.waitUntilPoweredOn(timeout: .seconds(10))
            let again = try await central.connect(peripheral.id, timeout: .seconds(10))
            #expect(again === peripheral)
            #expect(await peripheral.isConnected)
            await central.close()
        }
    }

    @Test("the link dropping during a read fails it with disconnected")
    func dropDuringRead() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected()
            let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            let events = peripheral.events
            fixture.simulator.inject(SimulatedFault(.read, address: Self.hrm, action: .dropLink))
            let error = await bleError { try await location.read() }
            #expect(error?.code == .disconnected)
            #expect(error?.isTransient == true)
            #expect(try await first(events, where: Self.isDisconnect) != nil)
            // Further operations fail at once, without asking bluetoothd.
            #expect(await bleError { try await location.read() }?.code == .notConnected)
            await central.close()
        }
    }

    @Test("the link dropping during a write fails it with disconnected")
    func dropDuringWrite() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected()
            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            fixture.simulator.inject(SimulatedFault(.write, address: Self.hrm, action: .dropLink))
            let error = await bleError { try await control.write(Data([0x01]), type: .withResponse) }
            #expect(error?.code == .disconnected)
            await central.close()
        }
    }

    @Test("operations in flight fail at once when the link drops")
    func dropFailsPendingOperationsAtOnce() async throws {
        try await SimulatorFixture.run { fixture in
            let recorder = LogRecorder()
            let (central, peripheral) = try await fixture.connected(options: tracing(recorder))
            let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            fixture.simulator.inject(SimulatedFault(.read, address: Self.hrm, action: .delay(.seconds(30))))
            let read = Task { try await location.read(timeout: .seconds(60)) }
            try await recorder.waitFor("GattCharacteristic1.ReadValue")
            try await handledByBluetoothd(central)
            try fixture.simulator.dropLink(address: Self.hrm)
            // Ended by the link loss, at once: bluetoothd drops the delayed answer with the link,
            // and the read's deadline (a minute, past the suite's time limit) would say timeout.
            let error = await bleError { try await read.value }
            #expect(error?.code == .disconnected)
            await central.close()
        }
    }

    @Test("disconnect() fails the operations in flight at once")
    func localDisconnectFailsPendingOperations() async throws {
        try await SimulatorFixture.run { fixture in
            let recorder = LogRecorder()
            let (central, peripheral) = try await fixture.connected(options: tracing(recorder))
            let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            fixture.simulator.inject(SimulatedFault(.read, address: Self.hrm, action: .delay(.seconds(30))))
            let read = Task { try await location.read(timeout: .seconds(60)) }
            try await recorder.waitFor("GattCharacteristic1.ReadValue")
            try await handledByBluetoothd(central)
            try await peripheral.disconnect()
            // Ended by the link loss, at once: bluetoothd drops the delayed answer with the link,
            // and the read's deadline (a minute, past the suite's time limit) would say timeout.
            let error = await bleError { try await read.value }
            #expect(error?.code == .disconnected)
            await central.close()
        }
    }

    @Test("a notification burst cut by a drop: the values sent before it arrive, in order")
    func dropDuringNotificationBurst() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected()
            let hr = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
            let values = try await hr.subscribe()
            let events = peripheral.events
            for byte in UInt8(0)..<50 {
                try fixture.simulator.notify(address: Self.hrm, characteristic: "2A37", value: Data([byte]))
            }
            try fixture.simulator.dropLink(address: Self.hrm)
            #expect(try await first(events, where: Self.isDisconnect) != nil)
            let received = try await collect(values, count: 50)
            #expect(received == (UInt8(0)..<50).map { Data([$0]) })
            await central.close()
        }
    }
}
