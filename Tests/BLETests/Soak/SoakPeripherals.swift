import BLE
import BLESimulator
import Foundation

/// The soak's peripherals: one service with a characteristic for each kind of operation.
enum SoakPeripherals {
    static let service = BluetoothUUID("FFF0")
    static let readable = BluetoothUUID("FFF1")
    static let writable = BluetoothUUID("FFF2")
    static let notifying = BluetoothUUID("FFF3")
    static let indicating = BluetoothUUID("FFF4")

    static func address(_ index: Int) -> String {
        String(format: "D2:00:00:00:%02X:%02X", index / 256, index % 256)
    }

    static func make(_ index: Int) -> VirtualPeripheral {
        var peripheral = VirtualPeripheral(
            address: address(index), name: "Soak \(index)",
            services: [
                VirtualService(
                    uuid: "FFF0",
                    characteristics: [
                        VirtualCharacteristic(uuid: "FFF1", flags: ["read"], value: [UInt8(index % 256)]),
                        VirtualCharacteristic(uuid: "FFF2", flags: ["read", "write", "write-without-response"]),
                        VirtualCharacteristic(uuid: "FFF3", flags: ["notify"]),
                        VirtualCharacteristic(uuid: "FFF4", flags: ["indicate"]),
                    ])
            ])
        peripheral.serviceUUIDs = ["FFF0"]
        peripheral.advertisingIntervalMs = 100
        return peripheral
    }
}
