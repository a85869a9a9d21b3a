import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// `updatePeripheral` and the values the peripheral holds: they follow their characteristic by
/// UUID, wherever the new description puts it, as a real peripheral's database would.
@Suite("Fidelity: updatePeripheral keeps values by UUID", .timeLimit(.minutes(1)))
struct UpdatePeripheralValuesTests {
    @Test("Values follow their characteristics when services move; new or re-initialised ones take the new value")
    func valuesFollowUUIDs() async throws {
        try await Fidelity.run(.bluez566, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            try await client.call(
                Paths.controlPoint, BlueZInterface.gattCharacteristic1, "WriteValue",
                [.bytes(Data([0x05])), .dictionary(key: .string, value: .variant, [])])
            let address = Peripherals.sensorAddress
            #expect(try simulator.value(address: address, characteristic: "2A39") == Data([0x05]))
            try simulator.updatePeripheral(address: address) { peripheral in
                var heartRate = peripheral.services[0]
                // 2A38's initial value changes; 2A39 moves to the front of its service.
                heartRate.characteristics[1].value = [0x02]
                heartRate.characteristics.insert(heartRate.characteristics.remove(at: 2), at: 0)
                let battery = VirtualService(
                    uuid: "180F", characteristics: [VirtualCharacteristic(uuid: "2A19", flags: ["read"], value: [0x50])]
                )
                peripheral.services = [battery, peripheral.services[1], heartRate]
            }
            #expect(try simulator.value(address: address, characteristic: "2A39") == Data([0x05]))
            #expect(try simulator.value(address: address, characteristic: "2A38") == Data([0x02]))
            #expect(try simulator.value(address: address, characteristic: "2A19") == Data([0x50]))
            #expect(try simulator.value(address: address, characteristic: UUIDs.data) == Data("hello".utf8))
            #expect(try simulator.value(address: address, characteristic: "2A37") == Data([0x00, 0x48]))
        }
    }
}
