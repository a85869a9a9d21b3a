import BLE
import BLESimulator
import Foundation
import Testing

/// Reliable writes (Prepare + Execute Write, verified): BlueZ's `type: "reliable"`.
@Suite("GATT reliable write", .timeLimit(.minutes(1)))
struct ReliableWriteTests {
    @Test("a reliable write longer than one packet stores the whole value")
    func reliableLongWrite() async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor(mtu: 23)]) { fixture in
            let (central, peripheral) = try await fixture.connected(TestPeripherals.sensorAddress)
            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            let value = Data((0..<100).map { UInt8($0) })
            try await control.write(value, type: .reliable)
            let stored = try fixture.simulator.value(address: TestPeripherals.sensorAddress, characteristic: "2A39")
            #expect(stored == value)
            #expect(try await control.read() == value)
            await central.close()
        }
    }

    @Test("a reliable write beyond 512 bytes is refused with invalidArguments, nothing stored")
    func reliableTooLong() async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            let (central, peripheral) = try await fixture.connected(TestPeripherals.sensorAddress)
            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            let before = try fixture.simulator.value(address: TestPeripherals.sensorAddress, characteristic: "2A39")
            let error = await bleError { try await control.write(Data(count: 513), type: .reliable) }
            #expect(error?.code == .invalidArguments)
            #expect(
                try fixture.simulator.value(address: TestPeripherals.sensorAddress, characteristic: "2A39") == before)
            await central.close()
        }
    }
}
