/// Names of vendor-defined 128-bit UUIDs that many devices carry, as bluetoothctl and the
/// vendors' own apps name them: a UART bridge or a DFU service shows by name in `ble explore`
/// instead of as 36 hex digits. Keys are in ``BluetoothUUID/uuidString``'s form (lower case).
enum VendorUUIDs {
    static let names: [String: String] = [
        // Nordic UART Service (NUS) and its characteristics.
        "6e400001-b5a3-f393-e0a9-e50e24dcca9e": "Nordic UART Service",
        "6e400002-b5a3-f393-e0a9-e50e24dcca9e": "Nordic UART RX",
        "6e400003-b5a3-f393-e0a9-e50e24dcca9e": "Nordic UART TX",
        // Nordic LED Button Service (the nRF SDK's blinky example).
        "00001523-1212-efde-1523-785feabcd123": "Nordic LED Button Service",
        "00001524-1212-efde-1523-785feabcd123": "Nordic LBS Button",
        "00001525-1212-efde-1523-785feabcd123": "Nordic LBS LED",
        // Nordic DFU: the legacy service and the buttonless entry of Secure DFU.
        "00001530-1212-efde-1523-785feabcd123": "Nordic Legacy DFU",
        "8ec90001-f315-4f60-9fb8-838830daea50": "Nordic Secure DFU Control Point",
        "8ec90002-f315-4f60-9fb8-838830daea50": "Nordic Secure DFU Packet",
        "8ec90003-f315-4f60-9fb8-838830daea50": "Nordic Buttonless DFU",
        // Apple's notification and media services, offered by iPhones.
        "7905f431-b5ce-4e99-a40f-4b1e122d00d0": "Apple Notification Center Service",
        "89d3502b-0f36-433a-8ef4-c502ad55f8dc": "Apple Media Service",
        // Microchip (ISSC) Transparent UART, on RN487x and BM7x modules.
        "49535343-fe7d-4ae5-8fa9-9fafd205e455": "Microchip Transparent UART",
        // Texas Instruments' SimpleLink OAD (over-the-air download).
        "f000ffc0-0451-4000-b000-000000000000": "TI OAD",
    ]
}
