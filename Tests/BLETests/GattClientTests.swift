import BLE
import BLESimulator
import Foundation
import Testing

@Suite("GATT client")
struct GattClientTests {
    static func connected(_ fixture: SimulatorFixture) async throws -> (Central, Peripheral) {
        let central = try await fixture.central()
        try await central.waitUntilPoweredOn(timeout: .seconds(5))
        let id = try PeripheralID(address: SimulatorFixture.heartRateAddress)
        let peripheral = try await central.connect(id, timeout: .seconds(5))
        return (central, peripheral)
    }

    @Test("discover, read, write")
    func discoverReadWrite() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await Self.connected(fixture)
            let services = try await peripheral.discoverServices()
            #expect(services.map(\.uuid) == [BluetoothUUID("1801"), BluetoothUUID("180D")], "the standard 1801 first")
            #expect(services.last?.characteristics.count == 3)
            let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            #expect(location.properties.contains(.read))
            #expect(try await location.read() == Data([0x01]))
            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            try await control.write(Data([0x01]), type: .withResponse)
            #expect(
                try fixture.simulator.value(address: SimulatorFixture.heartRateAddress, characteristic: "2A39")
                    == Data([0x01]))
            await central.close()
        }
    }

    @Test("notifications: every value, in order, none from reads")
    func notifications() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await Self.connected(fixture)
            let hr = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
            let values = try await hr.subscribe()
            for byte in UInt8(1)...5 {
                try fixture.simulator.notify(
                    address: SimulatorFixture.heartRateAddress, characteristic: "2A37", value: Data([0, byte]))
            }
            try fixture.simulator.notify(
                address: SimulatorFixture.heartRateAddress, characteristic: "2A37", value: Data())
            // A deadline, so a lost value fails the test instead of hanging the suite.
            let received = try await withThrowingTaskGroup(of: [Data]?.self) { group in
                group.addTask {
                    var collected: [Data] = []
                    for await value in values {
                        collected.append(value)
                        if collected.count == 6 { break }
                    }
                    return collected
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(15))
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                return first ?? []
            }
            #expect(received == (UInt8(1)...5).map { Data([0, $0]) } + [Data()])
            await central.close()
        }
    }
}
