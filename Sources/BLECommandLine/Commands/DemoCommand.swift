import BLE
import BLESimulator
import DBusTestSupport
import Foundation

/// `ble demo`: the SDK's main path, narrated, on a simulated heart-rate monitor (or on a real
/// adapter with `--real`).
enum DemoCommand {
    static let spec = CommandSpec(
        name: "demo",
        summary: "walk through scan → connect → discover → read → subscribe → write → disconnect, narrated",
        options: CommonOptions.placement + [
            .init("--real", "use the system's bluetoothd and a real heart-rate monitor nearby"),
            .init("--count", value: "N", "heart-rate notifications to show (default 5)"),
        ],
        details: """
            Without --real or --bus it starts the embedded BlueZ simulator on a private bus, even when a
            real adapter is reachable (it says so): the radio is used only when asked.
            """)

    static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        let count = try arguments.integer("--count", in: 1...1000) ?? 5
        let real = arguments.flag("--real")
        var bus = common.bus
        var privateBus: TestBus?
        var simulator: Simulator?
        if arguments.value("--bus") == nil && !real {
            if let adapters = await realAdapters(), !adapters.isEmpty {
                Terminal.step(
                    "a real adapter is reachable (\(adapters.joined(separator: ", "))); "
                        + "the demo uses the simulator anyway (add --real to use the radio)")
            } else {
                Terminal.step("no Bluetooth adapter reachable: starting the embedded BlueZ simulator on a private bus")
            }
            do {
                let testBus = try TestBus()
                privateBus = testBus
                simulator = try await Simulator.start(
                    on: .address(testBus.address), peripherals: [DemoPeripheral.heartRateMonitor()])
                bus = .address(testBus.address)
                Terminal.detail(Terminal.dim("bus \(testBus.address)"))
            } catch {
                privateBus?.stop()
                throw BLETool.Failure(description: "cannot start the simulator: \(error)", status: ExitCode.failure)
            }
        }
        defer {
            simulator?.stop()
            privateBus?.stop()
        }
        var options = common
        options.bus = bus
        try await walkThrough(options, count: count)
        return ExitCode.success
    }

    /// The adapters of a bluetoothd on the system bus; nil when there is none to ask.
    private static func realAdapters() async -> [String]? {
        guard let central = try? await Central(bus: .system) else { return nil }
        defer { Task { await central.close() } }
        return await central.adapters()
    }

    private static func walkThrough(_ options: CommonOptions, count: Int) async throws {
        let heartRate = BluetoothUUID("180D")
        let session = try await CentralSession.open(options)
        let central = session.central
        defer { Task { await session.close() } }
        Terminal.step("central on \(central.adapterName): \(await central.state)")

        Terminal.step("scanning for \(Describe.uuid(heartRate)) …")
        let scan = central.scan(services: [heartRate])
        let found = try await Progress.run("scanning") { () throws(BLEError) -> Discovery? in
            try await Deadline.run(options.timeout) { () throws(BLEError) -> Discovery? in
                for try await discovery in scan { return discovery }
                return nil
            }
        }
        guard let discovery = found else { throw BLEError(.notFound, message: "no heart-rate monitor found") }
        Terminal.detail(
            "found \(Terminal.bold(discovery.name ?? "unnamed")) \(discovery.id.address), RSSI \(discovery.rssi) dBm, "
                + "services \(discovery.advertisement.serviceUUIDs.map(Describe.uuid).joined(separator: ", "))")

        Terminal.step("connecting …")
        let started = ContinuousClock.now
        let peripheral = try await session.connect(discovery.id)
        Terminal.detail("connected and resolved in \(Describe.milliseconds(ContinuousClock.now - started))")
        do {
            try await exercise(peripheral, count: count)
        } catch {
            await session.disconnect(peripheral)
            throw error
        }
        try await peripheral.disconnect()
        Terminal.step("disconnected. That is the whole path: scan → connect → discover → read → subscribe → write.")
    }

    /// Discover, read, subscribe, write: the part that needs the link.
    private static func exercise(_ peripheral: Peripheral, count: Int) async throws {
        let heartRate = BluetoothUUID("180D")
        Terminal.step("discovering services")
        for service in try await peripheral.discoverServices() {
            Terminal.detail("service \(Describe.uuid(service.uuid))")
            for characteristic in service.characteristics {
                Terminal.detail("  characteristic \(Describe.uuid(characteristic.uuid)) [\(characteristic.properties)]")
            }
        }

        let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: heartRate)
        let value = try await location.read()
        let places = ["other", "chest", "wrist", "finger", "hand", "ear lobe", "foot"]
        let place = value.first.map { Int($0) < places.count ? places[Int($0)] : "unknown" } ?? "unknown"
        Terminal.step("read Body Sensor Location: \(ValueFormat.hex(value)) (\(place))")

        let measurement = try await peripheral.characteristic(BluetoothUUID("2A37"), in: heartRate)
        Terminal.step("subscribing to Heart Rate Measurement: \(count) live values")
        var received = 0
        for await bytes in try await measurement.subscribe() {
            received += 1
            Terminal.detail("♥ \(heartRateValue(bytes)) bpm  \(Terminal.dim(Describe.time(Date())))")
            if received >= count { break }
        }
        if received < count { throw BLEError(.cancelled, message: "interrupted") }

        let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: heartRate)
        try await control.write(Data([0x01]), type: .withResponse)
        Terminal.step("wrote 01 to Heart Rate Control Point (reset energy expended)")
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
                    uuid: "180F",
                    characteristics: [VirtualCharacteristic(uuid: "2A19", flags: ["read", "notify"], value: [87])]),
            ])
        peripheral.serviceUUIDs = ["180D"]
        peripheral.rssi = -58
        peripheral.rssiJitter = 3
        peripheral.txPower = 4
        peripheral.manufacturerData = [0x006B: HexData(Data([0x02, 0xC2]))]
        peripheral.services[0].characteristics[0].notifyIntervalMs = 250
        let beats: [[UInt8]] = [
            [0x00, 0x48], [0x00, 0x4A], [0x00, 0x4C], [0x00, 0x4B], [0x00, 0x49], [0x00, 0x47],
        ]
        peripheral.services[0].characteristics[0].notifyValues = beats.map { HexData(Data($0)) }
        return peripheral
    }
}
