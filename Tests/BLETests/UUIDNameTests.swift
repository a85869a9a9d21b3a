import Testing

@testable import BLE

/// Names for people: SIG assigned numbers and well-known vendor UUIDs, whatever the spelling.
@Suite struct UUIDNameTests {
    @Test func sigNamesInAnyForm() {
        #expect(BluetoothUUID("180D").name == "Heart Rate")
        #expect(BluetoothUUID("0000180d-0000-1000-8000-00805F9B34FB").name == "Heart Rate")
        #expect(BluetoothUUID("2a37").name == "Heart Rate Measurement")
        #expect(BluetoothUUID("FE95").name == "Xiaomi")
    }

    @Test func vendorNamesInAnyCase() {
        #expect(BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E").name == "Nordic UART Service")
        #expect(BluetoothUUID("6e400003-b5a3-f393-e0a9-e50e24dcca9e").name == "Nordic UART TX")
        #expect(BluetoothUUID("8EC90003-F315-4F60-9FB8-838830DAEA50").name == "Nordic Buttonless DFU")
    }

    @Test func unknownOnesHaveNone() {
        #expect(BluetoothUUID("12345678-1234-5678-1234-56789abcdef0").name == nil)
        #expect(BluetoothUUID("FFF0").name == nil)
    }

    @Test func everyVendorKeyIsInTheCanonicalForm() {
        for key in VendorUUIDs.names.keys {
            #expect(BluetoothUUID(key).uuidString == key, "\(key) would never match")
            #expect(BluetoothUUID(key).shortValue == nil, "\(key) is on the SIG base")
        }
    }
}
