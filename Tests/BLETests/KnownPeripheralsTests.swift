import BLE
import BLESimulator
import DBus
import Foundation
import Testing

/// `knownPeripherals()` and `connectedPeripherals(withServices:)`: Core Bluetooth's retrieve
/// calls, reattaching to what BlueZ already knows without scanning.
@Suite("Known and connected peripherals", .timeLimit(.minutes(1)))
struct KnownPeripheralsTests {
    static let hrm = SimulatorFixture.heartRateAddress

    @Test("known peripherals: seen ones with their name and services, connected ones marked")
    func known() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            #expect(await central.knownPeripherals().isEmpty)
            _ = try #require(try await first(central.scan()) { $0.id.address == Self.hrm })
            let seen = try #require(await central.knownPeripherals().first)
            #expect(seen.id == (try PeripheralID(address: Self.hrm)))
            #expect(seen.name == "HRM")
            #expect(!seen.isConnected)
            #expect(!seen.isPaired)
            #expect(seen.services.contains(BluetoothUUID("180D")))

            let peripheral = try await central.connect(seen.id, timeout: .seconds(10))
            #expect(await central.knownPeripherals().map(\.isConnected) == [true])
            try await peripheral.disconnect()
            #expect(await central.knownPeripherals().map(\.isConnected) == [false])
            await central.close()
        }
    }

    @Test("a peripheral connected once stays known across a bluetoothd restart")
    func knownAfterRestart() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected()
            try await peripheral.disconnect()
            try await fixture.simulator.restartDaemon()
            try await central.waitUntilPoweredOn(timeout: .seconds(10))
            try await eventually("the stored device is back") { await central.knownPeripherals().count == 1 }
            let known = try #require(await central.knownPeripherals().first)
            #expect(known.id == peripheral.id)
            #expect(known.rssi == nil, "not seen since the restart")
            await central.close()
        }
    }

    @Test("connected peripherals: links opened by another process, filtered by service, reattached")
    func connectedByAnotherProcess() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            _ = try #require(try await first(central.scan()) { $0.id.address == Self.hrm })
            // Another process connects the device.
            let other = try await BusProbe.open(fixture)
            try await other.call(SimPath.device(Self.hrm), "org.bluez.Device1", "Connect")
            // Listed once its services are resolved (Connected=true comes first).
            try await eventually("the central sees the link") { await !central.connectedPeripherals().isEmpty }

            #expect(await central.connectedPeripherals(withServices: [BluetoothUUID("180F")]).isEmpty)
            let found = await central.connectedPeripherals(withServices: [BluetoothUUID("180D")])
            let peripheral = try #require(found.first)
            #expect(found.count == 1)
            #expect(await central.connectedPeripherals().count == 1, "no filter: all connected")
            #expect(peripheral.id.address == Self.hrm)
            #expect(await peripheral.isConnected, "usable at once")
            let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            #expect(try await location.read() == Data([0x01]))
            #expect(fixture.simulator.statistics.connections == 1, "no second link")

            // The SDK does not close a link it did not open.
            await central.close()
            #expect(
                try await other.property(SimPath.device(Self.hrm), "org.bluez.Device1", "Connected") == .boolean(true))
            other.close()
        }
    }

    @Test("connecting to a peripheral another process connected reuses its link")
    func connectToLinkOfAnotherProcess() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            _ = try #require(try await first(central.scan()) { $0.id.address == Self.hrm })
            let other = try await BusProbe.open(fixture)
            try await other.call(SimPath.device(Self.hrm), "org.bluez.Device1", "Connect")
            try await eventually("the central sees the link") {
                await central.knownPeripherals().first?.isConnected == true
            }
            let peripheral = try await central.connect(try PeripheralID(address: Self.hrm), timeout: .seconds(10))
            #expect(await peripheral.isConnected)
            #expect(fixture.simulator.statistics.connections == 1)
            other.close()
            await central.close()
        }
    }
}
