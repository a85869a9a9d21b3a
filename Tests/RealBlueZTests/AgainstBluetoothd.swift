import Testing

/// The SDK against a bluetoothd: BLESimulator in `swift test`, the real bluetoothd 5.66 with
/// two emulated controllers in `make test-bluez` (see ``Backend``). One daemon and one
/// peripheral serve every test, so the tests run one at a time; each starts with BlueZ having
/// forgotten the peripheral and ends with the link down.
@Suite("Against bluetoothd", .serialized, .timeLimit(.minutes(5)))
struct AgainstBluetoothd {}
