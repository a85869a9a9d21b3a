import Foundation

/// Which bluetoothd the suite runs against. The same tests run on both, so a disagreement
/// between the simulator and the real daemon shows up as a test that fails on one of them.
enum Backend: String, Sendable, CustomStringConvertible {
    /// BLESimulator (5.66 profile) on a private bus: any machine, part of `swift test`.
    case simulator
    /// The real bluetoothd 5.66 of the test guest (`make test-bluez`), hci0 central, hci1
    /// peripheral served by Tests/RealBlueZ/peripheral.py.
    case bluez

    /// `SWIFT_BLE_BACKEND=bluez` (set by Tests/RealBlueZ/run-in-guest.sh) selects the real
    /// daemon; anything else the simulator.
    static var current: Backend {
        ProcessInfo.processInfo.environment["SWIFT_BLE_BACKEND"] == "bluez" ? .bluez : .simulator
    }

    var description: String { rawValue }
}
