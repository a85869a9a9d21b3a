import BLE
import BLESimulator
import Foundation

/// The peripheral every backend serves: one primary service with a characteristic per GATT
/// operation the suite exercises. Tests/RealBlueZ/peripheral.py serves the same layout on the
/// real daemon; keep the two in step.
enum TestPeripheralLayout {
    static let service = BluetoothUUID.test("0000")
    /// Read and write with response; starts as "hello".
    static let readWrite = BluetoothUUID.test("0001")
    /// Read and write without response.
    static let writeWithoutResponse = BluetoothUUID.test("0002")
    /// Read and notify.
    static let notifying = BluetoothUUID.test("0003")
    /// Read and indicate.
    static let indicating = BluetoothUUID.test("0004")
    static let localName = "swift-ble-test"
    static let initialValue = Data("hello".utf8)

    /// Each characteristic with its BlueZ flags.
    static let characteristics: [(uuid: BluetoothUUID, flags: [String])] = [
        (readWrite, ["read", "write"]),
        (writeWithoutResponse, ["read", "write-without-response"]),
        (notifying, ["read", "notify"]),
        (indicating, ["read", "indicate"]),
    ]

    /// The layout as a simulated peripheral, with what the real peer's daemon adds.
    static func virtualPeripheral(address: String) -> VirtualPeripheral {
        let characteristics = characteristics.map { uuid, flags in
            VirtualCharacteristic(
                uuid: uuid.uuidString, flags: flags,
                value: HexData(uuid == readWrite ? initialValue : Data()))
        }
        var peripheral = VirtualPeripheral(
            address: address, name: localName,
            services: [
                VirtualService(uuid: "180A", characteristics: [pnpID]),
                VirtualService(uuid: service.uuidString, characteristics: characteristics),
            ])
        peripheral.standardServices = StandardServices(deviceName: peerDaemonName)
        peripheral.serviceUUIDs = [service.uuidString]
        return peripheral
    }

    /// What the real peer's bluetoothd (hci1 in the guest) serves beside peripheral.py's
    /// service, imitated by the virtual peripheral: its GAP Device Name is its adapter's name,
    /// not the advertised one, so the central's gap plugin renames the device at connection;
    /// and its Device Information service has the PnP ID of its default `DeviceID`
    /// (USB, Linux Foundation 0x1D6B, product 0x0246, version 0x0542), which the deviceinfo
    /// plugin turns into `Modalias`.
    static let peerDaemonName = "BlueZ 5.66"
    private static let pnpID = VirtualCharacteristic(
        uuid: "2A50", flags: ["read"], value: [0x02, 0x6b, 0x1d, 0x46, 0x02, 0x42, 0x05])
}

extension BluetoothUUID {
    /// A UUID of the test service's family (peripheral.py's `uuid(suffix)`).
    fileprivate static func test(_ suffix: String) -> BluetoothUUID {
        BluetoothUUID("5b1e\(suffix)-6d2c-4f4e-9a61-2f3b0c7d8e90")
    }
}
