import BLE
import BLESimulator
import DBusTestSupport
import Foundation

/// The code of the "Testing your app with BLESimulator" article.
enum TestingWithSimulator {
    /// Starts a private bus and a simulator with one thermometer, and checks that a read fault
    /// reaches the app as a typed error.
    static func thermometerFault() async throws -> BLEError.Code? {
        // snippet.begin simulator-setup
        let bus = try TestBus()  // a private dbus-daemon, stopped by bus.stop()
        defer { bus.stop() }
        let thermometer = VirtualPeripheral(
            address: "AA:BB:CC:00:00:01", name: "Thermo",
            services: [
                VirtualService(
                    uuid: "1809",
                    characteristics: [
                        VirtualCharacteristic(uuid: "2A1C", flags: ["read", "indicate"], value: [0, 0x6E, 1, 0, 0xFF])
                    ]
                )
            ])
        let simulator = try await Simulator.start(on: .address(bus.address), peripherals: [thermometer])
        defer { simulator.stop() }

        let central = try await Central(bus: .address(bus.address))  // the app under test uses this bus
        // snippet.end
        defer { Task { await central.close() } }
        let id = try PeripheralID(address: "AA:BB:CC:00:00:01")
        // snippet.begin simulator-fault
        simulator.inject(SimulatedFault(.read, address: "AA:BB:CC:00:00:01", action: .attError(0x80)))
        let peripheral = try await central.connect(id)
        let temperature = try await peripheral.characteristic(BluetoothUUID("2A1C"), in: BluetoothUUID("1809"))
        do {
            _ = try await temperature.read()
        } catch {
            print(error.code, error.attErrorCode ?? 0)  // .attError 128: the sensor's own application error
            return error.code
        }
        // snippet.end
        return nil
    }
}
