import BLE
import Foundation

/// What our own ``PeripheralManager`` publishes on hci1 in the peripheral-role tests: the
/// same four kinds of characteristic as ``TestPeripheralLayout``, under another service UUID
/// and local name, so a central never takes it for peripheral.py (which advertises on the
/// same adapter under the real daemon).
enum OwnPeripheralLayout {
    static let service = BluetoothUUID("5b1e1000-6d2c-4f4e-9a61-2f3b0c7d8e90")
    /// Read and write with response; starts as ``initialValue``.
    static let readWrite = BluetoothUUID("5b1e1001-6d2c-4f4e-9a61-2f3b0c7d8e90")
    /// Read and write without response.
    static let writeWithoutResponse = BluetoothUUID("5b1e1002-6d2c-4f4e-9a61-2f3b0c7d8e90")
    /// Read and notify.
    static let notifying = BluetoothUUID("5b1e1003-6d2c-4f4e-9a61-2f3b0c7d8e90")
    /// Read and indicate.
    static let indicating = BluetoothUUID("5b1e1004-6d2c-4f4e-9a61-2f3b0c7d8e90")
    static let localName = "swift-ble-pm"
    static let initialValue = Data("hello from the manager".utf8)

    /// Each characteristic with its properties.
    static let characteristics: [(uuid: BluetoothUUID, properties: CharacteristicProperties)] = [
        (readWrite, [.read, .write]),
        (writeWithoutResponse, [.read, .writeWithoutResponse]),
        (notifying, [.read, .notify]),
        (indicating, [.read, .indicate]),
    ]

    /// The service as the manager publishes it: every value dynamic, so each read and write
    /// reaches the manager's requests (and the driver answers them).
    static var mutableService: MutableService {
        MutableService(
            uuid: service,
            characteristics: characteristics.map { MutableCharacteristic(uuid: $0.uuid, properties: $0.properties) })
    }

    /// The advertisement: connectable, the service and the name.
    static var advertisement: Advertisement {
        Advertisement(localName: localName, serviceUUIDs: [service])
    }
}
