import BLE
import Foundation

/// The code of the "Getting started" article.
enum GettingStarted {
    /// Finds the first heart-rate monitor on `bus` and reads its sensor location.
    static func firstScan(bus: Bus) async throws(BLEError) -> (name: String?, location: Data) {
        // snippet.begin first-scan
        let central = try await Central(bus: bus)  // Central() talks to the system's bluetoothd
        try await central.waitUntilPoweredOn(timeout: .seconds(5))

        var found: Discovery?
        for try await discovery in central.scan(services: [BluetoothUUID("180D")]) {
            print("found \(discovery.name ?? "?") at \(discovery.id), RSSI \(discovery.rssi) dBm")
            found = discovery
            break  // leaving the loop stops scanning
        }
        guard let discovery = found else { throw BLEError(.notFound, message: "no heart-rate monitor") }

        let peripheral = try await central.connect(discovery.id)
        let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
        let value = try await location.read()
        try await peripheral.disconnect()
        // snippet.end
        await central.close()
        return (discovery.name, value)
    }

    /// Prints the first `count` heart-rate values of a connected monitor.
    static func liveValues(of peripheral: Peripheral, count: Int) async throws(BLEError) -> [Data] {
        var received: [Data] = []
        // snippet.begin live-values
        let measurement = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
        for await value in measurement.notifications {  // the first subscriber sends StartNotify
            received.append(value)
            if received.count == count { break }  // the last one leaving sends StopNotify
        }
        // snippet.end
        return received
    }
}
