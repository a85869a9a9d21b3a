import BLESimulator
import DBus
import DBusTestSupport
import Foundation
import Testing

@testable import BLE

/// A reconnection costs one call, and the write-without-response limit is still each link's:
/// the MTU is read once per link, when first needed (BlueZ quirk Q10), not at every connect.
@Suite("The link's MTU, read when needed")
struct LinkMTUTests {
    static let sensor = TestPeripherals.sensorAddress

    /// The method calls `central` sent to the device's objects, in order, by member.
    static func deviceCalls(_ monitor: BusMonitor, from central: Central) -> [String] {
        let device = SimPath.device(sensor)
        return monitor.messages.compactMap { message in
            guard message.kind == .methodCall, message.sender?.rawValue == central.diagnostics.connectionName,
                message.path?.rawValue.hasPrefix(device) == true
            else { return nil }
            return message.member?.rawValue
        }
    }

    @Test("a reconnection to a device whose objects the mirror holds calls Connect and nothing else")
    func reconnectionCallsConnectOnly() async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            let central = try await fixture.poweredCentral()
            let id = try PeripheralID(address: Self.sensor)
            let first = try await central.connect(id, timeout: .seconds(10))
            try await first.disconnect()
            let monitor = try BusMonitor(bus: .address(fixture.bus.address))
            defer { monitor.stop() }
            let peripheral = try await central.connect(id, timeout: .seconds(10))
            #expect(try await !peripheral.discoverServices().isEmpty)
            try await monitorCaughtUp(monitor, with: central)
            #expect(Self.deviceCalls(monitor, from: central) == ["Connect"])
            await central.close()
        }
    }

    @Test("the write-without-response limit follows the MTU of each link, read once per link")
    func limitFollowsEachLink() async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            let central = try await fixture.poweredCentral()
            let id = try PeripheralID(address: Self.sensor)
            let peripheral = try await central.connect(id, timeout: .seconds(10))
            #expect(await peripheral.maximumWriteLength(for: .withoutResponse) == 182)
            try await peripheral.disconnect()
            try fixture.simulator.updatePeripheral(address: Self.sensor) { $0.mtu = 100 }
            let monitor = try BusMonitor(bus: .address(fixture.bus.address))
            defer { monitor.stop() }
            _ = try await central.connect(id, timeout: .seconds(10))
            #expect(await peripheral.maximumWriteLength(for: .withoutResponse) == 97)
            #expect(await peripheral.maximumWriteLength(for: .withoutResponse) == 97)
            try await monitorCaughtUp(monitor, with: central)
            #expect(Self.deviceCalls(monitor, from: central) == ["Connect", "Get"], "one MTU read for the link")
            await central.close()
        }
    }

    @Test("a long write without response after a reconnection is held to the new link's MTU")
    func longWriteUsesNewLink() async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            let central = try await fixture.poweredCentral()
            let id = try PeripheralID(address: Self.sensor)
            let peripheral = try await central.connect(id, timeout: .seconds(10))
            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            #expect(await peripheral.maximumWriteLength(for: .withoutResponse) == 182)
            try await peripheral.disconnect()
            try fixture.simulator.updatePeripheral(address: Self.sensor) { $0.mtu = 100 }
            _ = try await central.connect(id, timeout: .seconds(10))
            // Within the last link's limit, beyond this one's: refused, not truncated.
            let error = await bleError { try await control.write(Data(count: 120), type: .withoutResponse) }
            #expect(error?.code == .invalidArguments)
            try await control.write(Data(count: 97), type: .withoutResponse)
            await central.close()
        }
    }

    @Test("mtu follows each link; mtuChanged tells a new one, after the link and once")
    func mtuAndItsEvent() async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor(mtu: 185)]) { fixture in
            let central = try await fixture.poweredCentral()
            let id = try PeripheralID(address: Self.sensor)
            let peripheral = try await central.connect(id, timeout: .seconds(10))
            #expect(await peripheral.mtu == 185)
            #expect(await peripheral.maximumWriteLength(for: .withoutResponse) == 182)
            let events = peripheral.events
            try await peripheral.disconnect()
            #expect(await peripheral.mtu == 23, "no link, the minimum")

            // The next link negotiates less; the SDK reads it when first needed (BlueZ says nothing).
            try fixture.simulator.updatePeripheral(address: Self.sensor) { $0.mtu = 100 }
            _ = try await central.connect(id, timeout: .seconds(10))
            #expect(await peripheral.mtu == 100)
            #expect(await peripheral.maximumWriteLength(for: .withoutResponse) == 97)
            try await peripheral.disconnect()
            // The same MTU again: no event.
            _ = try await central.connect(id, timeout: .seconds(10))
            #expect(await peripheral.mtu == 100)
            try await peripheral.disconnect()

            var seen: [ConnectionEvent] = []
            for await event in events {
                seen.append(event)
                if seen.filter({ if case .disconnected = $0 { true } else { false } }).count == 3 { break }
            }
            #expect(
                seen == [
                    .disconnected(.local), .connected, .mtuChanged(100), .disconnected(.local), .connected,
                    .disconnected(.local),
                ])
            await central.close()
        }
    }
}
