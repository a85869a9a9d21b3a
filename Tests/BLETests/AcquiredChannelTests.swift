import BLE
import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

@Suite("AcquireNotify and AcquireWrite", .timeLimit(.minutes(1)))
struct AcquiredChannelTests {
    static func uart() -> VirtualPeripheral {
        var peripheral = SimulatorFixture.heartRateMonitor()
        peripheral.mtu = 185
        peripheral.services.append(
            VirtualService(
                uuid: "6e400001-b5a3-f393-e0a9-e50e24dcca9e",
                characteristics: [
                    VirtualCharacteristic(
                        uuid: "6e400002-b5a3-f393-e0a9-e50e24dcca9e", flags: ["write-without-response"]),
                    VirtualCharacteristic(uuid: "6e400003-b5a3-f393-e0a9-e50e24dcca9e", flags: ["notify"]),
                ]))
        return peripheral
    }

    /// Starts an acquired iteration of `characteristic` and returns it once the simulated
    /// daemon granted the AcquireNotify (its `NotifyAcquired` turned true, a signal watched from
    /// before the iteration began): a datagram pushed from then on reaches the iteration,
    /// waiting in the socket if the SDK has not started reading it yet.
    static func acquiredIteration(
        _ characteristic: Characteristic, on fixture: SimulatorFixture
    ) async throws -> NotificationSequence.AsyncIterator {
        let probe = try await BusProbe.open(fixture)
        defer { probe.close() }
        let changes = try await probe.connection.signals(matchingAny: [
            MatchRule(
                sender: BlueZService.busName, interface: .properties, member: BlueZSignal.propertiesChanged,
                arguments: [0: BlueZInterface.gattCharacteristic1.rawValue])
        ])
        let iterator = characteristic.acquiredNotifications.makeAsyncIterator()
        var granted = false
        for await change in changes {
            guard case .dictionary(_, _, let entries)? = change.body.dropFirst().first else { continue }
            granted = entries.contains {
                $0.key == .string("NotifyAcquired") && $0.value.unwrappingVariant == .boolean(true)
            }
            if granted { break }
        }
        try #require(granted, "the bus closed before the AcquireNotify was granted")
        return iterator
    }

    @Test("acquired notifications deliver every datagram, in order, the last one kept as the last value")
    func acquiredNotifications() async throws {
        try await SimulatorFixture.run(peripherals: [Self.uart()]) { fixture in
            let (central, peripheral) = try await GattClientTests.connected(fixture)
            let tx = try await peripheral.characteristic(
                BluetoothUUID("6e400003-b5a3-f393-e0a9-e50e24dcca9e"),
                in: BluetoothUUID("6e400001-b5a3-f393-e0a9-e50e24dcca9e"))
            var iterator = try await Self.acquiredIteration(tx, on: fixture)
            let sent = try fixture.simulator.notify(
                address: SimulatorFixture.heartRateAddress, characteristic: "6e400003-b5a3-f393-e0a9-e50e24dcca9e",
                value: Data([0xAA]))
            #expect(sent == 1)
            for byte in UInt8(1)...3 {
                try fixture.simulator.notify(
                    address: SimulatorFixture.heartRateAddress, characteristic: "6e400003-b5a3-f393-e0a9-e50e24dcca9e",
                    value: Data([byte]))
            }
            var received: [Data] = []
            while received.count < 4, let value = await iterator.next() { received.append(value) }
            #expect(received == [Data([0xAA]), Data([1]), Data([2]), Data([3])])
            #expect(tx.lastValue == Data([3]), "a datagram is the characteristic's last value too")
            await central.close()
        }
    }

    @Test("datagrams and reads set the last value in the order they came, and closing keeps the last datagram")
    func lastValueFollowsDatagramsAndReads() async throws {
        let echo = "6e400004-b5a3-f393-e0a9-e50e24dcca9e"
        var uart = Self.uart()
        uart.services[uart.services.count - 1].characteristics.append(
            VirtualCharacteristic(uuid: echo, flags: ["read", "write", "notify"]))
        try await SimulatorFixture.run(peripherals: [uart]) { fixture in
            let (central, peripheral) = try await GattClientTests.connected(fixture)
            let characteristic = try await peripheral.characteristic(
                BluetoothUUID(echo), in: BluetoothUUID("6e400001-b5a3-f393-e0a9-e50e24dcca9e"))
            var iterator = try await Self.acquiredIteration(characteristic, on: fixture)
            try fixture.simulator.notify(
                address: SimulatorFixture.heartRateAddress, characteristic: echo, value: Data([0xA1]))
            #expect(await iterator.next() == Data([0xA1]))
            try await characteristic.write(Data([0xB2]))
            #expect(characteristic.lastValue == Data([0xA1]), "a datagram is the last value, a write is not one")
            try fixture.simulator.notify(
                address: SimulatorFixture.heartRateAddress, characteristic: echo, value: Data([0xB3]))
            #expect(await iterator.next() == Data([0xB3]))
            // Not asked for in between: the read's value must still come after the datagram's.
            try await characteristic.write(Data([0xB4]))
            #expect(try await characteristic.read() == Data([0xB4]))
            #expect(characteristic.lastValue == Data([0xB4]), "a read after a datagram is newer")
            try fixture.simulator.notify(
                address: SimulatorFixture.heartRateAddress, characteristic: echo, value: Data([0xC3]))
            #expect(await iterator.next() == Data([0xC3]))
            #expect(characteristic.lastValue == Data([0xC3]), "a datagram after a read is newer")
            try fixture.simulator.notify(
                address: SimulatorFixture.heartRateAddress, characteristic: echo, value: Data([0xD4]))
            #expect(await iterator.next() == Data([0xD4]))
            await central.close()
            #expect(characteristic.lastValue == Data([0xD4]), "the channel's end keeps its newest datagram")
        }
    }

    @Test("a write channel carries writes without response and enforces MTU − 3")
    func writeChannel() async throws {
        try await SimulatorFixture.run(peripherals: [Self.uart()]) { fixture in
            let (central, peripheral) = try await GattClientTests.connected(fixture)
            let rx = try await peripheral.characteristic(
                BluetoothUUID("6e400002-b5a3-f393-e0a9-e50e24dcca9e"),
                in: BluetoothUUID("6e400001-b5a3-f393-e0a9-e50e24dcca9e"))
            let channel = try await rx.openWriteChannel()
            #expect(channel.maximumWriteLength == 182)
            await #expect(throws: BLEError.self) { try await channel.write(Data(count: 183)) }
            try await channel.write(Data("hello".utf8))
            var stored: Data?
            for attempt in 0..<200 {
                stored = try fixture.simulator.value(
                    address: SimulatorFixture.heartRateAddress, characteristic: "6e400002-b5a3-f393-e0a9-e50e24dcca9e")
                if stored == Data("hello".utf8) { break }
                try await Task.sleep(for: .milliseconds(5 + attempt))
            }
            #expect(stored == Data("hello".utf8))
            channel.close()
            await central.close()
        }
    }
}
