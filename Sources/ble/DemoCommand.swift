import BLE
import BLESimulator
import BlueZ
import DBus
import DBusTestSupport
import Foundation

/// `ble demo`: the SDK's main path, narrated, on a simulated heart-rate monitor (or on a real
/// adapter with `--real`).
enum DemoCommand {
    static let usage = """
        usage: ble demo [--real] [--bus ADDRESS] [--adapter hciN] [--count N]
          --real      use the system's bluetoothd and a real heart-rate monitor nearby
          --bus       use the bluetoothd (or simulator) on this bus address
          --adapter   the adapter to use (default: the first)
          --count     heart-rate notifications to show (default 5)
        """

    static func run(_ arguments: [String]) async -> Int32 {
        var real = false
        var busAddress: String?
        var adapter: String?
        var count = 5
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--real": real = true
            case "--bus": busAddress = iterator.next()
            case "--adapter": adapter = iterator.next()
            case "--count": count = Int(iterator.next() ?? "") ?? count
            case "-h", "--help":
                print(usage)
                return ExitCode.success
            default:
                Terminal.error("unknown option \(argument)\n\(usage)")
                return ExitCode.usage
            }
        }
        let bus: BLE.Bus
        var privateBus: TestBus?
        var simulator: Simulator?
        if let busAddress {
            bus = .address(busAddress)
        } else if real {
            bus = .system
        } else {
            if await realBluetoothReachable() {
                Terminal.step("bluetoothd is running on this machine; the demo uses a simulator anyway (add --real to use the radio)")
            } else {
                Terminal.step("no bluetoothd reachable: starting the embedded BlueZ simulator on a private bus")
            }
            do {
                let testBus = try TestBus()
                privateBus = testBus
                simulator = try await Simulator.start(
                    on: .address(testBus.address), peripherals: [DemoPeripheral.heartRateMonitor()])
                bus = .address(testBus.address)
                Terminal.detail(Terminal.dim("bus \(testBus.address)"))
            } catch {
                Terminal.error("cannot start the simulator: \(error)")
                return ExitCode.failure
            }
        }
        defer {
            simulator?.stop()
            privateBus?.stop()
        }
        do {
            try await walkThrough(bus: bus, adapter: adapter, count: count)
            return ExitCode.success
        } catch {
            Terminal.error(error.description)
            switch error.code {
            case .bluetoothUnavailable, .poweredOff, .unsupported: return ExitCode.bluetoothUnavailable
            case .notFound: return ExitCode.notFound
            case .timeout: return ExitCode.timeout
            default: return ExitCode.failure
            }
        }
    }

    private static func realBluetoothReachable() async -> Bool {
        guard let connection = try? await Connection(bus: .system) else { return false }
        defer { connection.close() }
        return (try? await connection.nameOwner(of: BlueZService.busName)) != nil
    }

    private static func walkThrough(bus: BLE.Bus, adapter: String?, count: Int) async throws(BLEError) {
        let heartRate = BluetoothUUID("180D")
        let central = try await Central(bus: bus, adapter: adapter)
        defer { Task { await central.close() } }
        Terminal.step("central on \(central.adapterName): \(await central.state)")
        try await central.waitUntilPoweredOn(timeout: .seconds(10))

        Terminal.step("scanning for \(heartRate.name ?? "") (\(heartRate)) …")
        var found: Discovery?
        for try await discovery in central.scan(services: [heartRate]) {
            found = discovery
            break
        }
        guard let discovery = found else { throw BLEError(.notFound, message: "no heart-rate monitor found") }
        Terminal.detail(
            "found \(Terminal.bold(discovery.name ?? "unnamed")) \(discovery.id.address), RSSI \(discovery.rssi) dBm, "
                + "services \(discovery.advertisement.serviceUUIDs.map(describe).joined(separator: ", "))")

        Terminal.step("connecting …")
        let started = ContinuousClock.now
        let peripheral = try await central.connect(discovery.id, timeout: .seconds(15))
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        Terminal.detail("connected and resolved in \(String(format: "%.1f", milliseconds)) ms")

        Terminal.step("discovering services")
        for service in try await peripheral.discoverServices() {
            Terminal.detail("service \(describe(service.uuid))")
            for characteristic in service.characteristics {
                Terminal.detail("  characteristic \(describe(characteristic.uuid)) [\(characteristic.properties)]")
            }
        }

        let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: heartRate)
        let value = try await location.read()
        let places = ["other", "chest", "wrist", "finger", "hand", "ear lobe", "foot"]
        let place = value.first.map { Int($0) < places.count ? places[Int($0)] : "unknown" } ?? "unknown"
        Terminal.step("read Body Sensor Location: \(value.map { String(format: "%02x", $0) }.joined()) (\(place))")

        let measurement = try await peripheral.characteristic(BluetoothUUID("2A37"), in: heartRate)
        Terminal.step("subscribing to Heart Rate Measurement: \(count) live values")
        var received = 0
        for await bytes in try await measurement.subscribe() {
            received += 1
            Terminal.detail("♥ \(heartRateValue(bytes)) bpm")
            if received >= count { break }
        }

        let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: heartRate)
        try await control.write(Data([0x01]), type: .withResponse)
        Terminal.step("wrote 01 to Heart Rate Control Point (reset energy expended)")

        try await peripheral.disconnect()
        Terminal.step("disconnected. That is the whole path: scan → connect → discover → read → subscribe → write.")
    }

    private static func describe(_ uuid: BluetoothUUID) -> String {
        uuid.name.map { "\($0) (\(uuid))" } ?? uuid.description
    }

    /// Heart Rate Measurement: flags, then the value as UInt8 or UInt16 (bit 0 of the flags).
    static func heartRateValue(_ bytes: Data) -> String {
        guard let flags = bytes.first else { return "?" }
        if flags & 0x01 == 0 {
            return bytes.count > 1 ? String(bytes[bytes.startIndex + 1]) : "?"
        }
        guard bytes.count > 2 else { return "?" }
        return String(UInt16(bytes[bytes.startIndex + 1]) | UInt16(bytes[bytes.startIndex + 2]) << 8)
    }
}

/// The demo's simulated peripheral: a heart-rate monitor that beats once every 250 ms.
enum DemoPeripheral {
    static func heartRateMonitor() -> VirtualPeripheral {
        var peripheral = VirtualPeripheral(
            address: "C4:7C:8D:6A:11:22", name: "Polar H10 (simulated)",
            services: [
                VirtualService(
                    uuid: "180D",
                    characteristics: [
                        VirtualCharacteristic(uuid: "2A37", flags: ["notify"], value: [0x00, 0x48]),
                        VirtualCharacteristic(uuid: "2A38", flags: ["read"], value: [0x01]),
                        VirtualCharacteristic(uuid: "2A39", flags: ["write"], value: [0x00]),
                    ]),
                VirtualService(
                    uuid: "180F", characteristics: [VirtualCharacteristic(uuid: "2A19", flags: ["read", "notify"], value: [87])]),
            ])
        peripheral.serviceUUIDs = ["180D"]
        peripheral.rssi = -58
        peripheral.rssiJitter = 3
        peripheral.txPower = 4
        peripheral.manufacturerData = [0x006B: HexData(Data([0x02, 0xC2]))]
        peripheral.services[0].characteristics[0].notifyIntervalMs = 250
        let beats: [[UInt8]] = [[0x00, 0x48], [0x00, 0x4A], [0x00, 0x4C], [0x00, 0x4B], [0x00, 0x49], [0x00, 0x47]]
        peripheral.services[0].characteristics[0].notifyValues = beats.map { HexData(Data($0)) }
        return peripheral
    }
}
