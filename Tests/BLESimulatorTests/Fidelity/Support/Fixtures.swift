import BLESimulator
import BlueZ
import DBus
import DBusTestSupport
import Foundation
import Testing

/// Shared set-up of the fidelity suite: a private bus, a simulated bluetoothd on it, and a
/// recording client; the reference is bluez-dbus-api.md (section numbers in the tests).
enum Fidelity {
    /// How long a test waits for a signal or reply that should come at once. Generous: a
    /// loaded 2-core machine must never fail a correct test.
    static let eventDeadline: Duration = .seconds(15)
    /// The default deadline of the recording client's calls.
    static let callTimeout: Duration = .seconds(15)

    /// Runs `body` with a fresh bus, a simulator started on it and a subscribed client.
    static func run<Result>(
        _ release: Release, options: SimulatorOptions = SimulatorOptions(), peripherals: [VirtualPeripheral] = [],
        _ body: (Simulator, RecordingClient, TestBus) async throws -> Result
    ) async throws -> Result {
        try await withTestBus { bus in
            let simulator = try await Simulator.start(
                on: .address(bus.address), profile: release.profile, options: options, peripherals: peripherals)
            defer { simulator.stop() }
            let client = try await RecordingClient.connect(to: bus)
            defer { client.close() }
            return try await body(simulator, client, bus)
        }
    }
}

/// The two bluetoothd releases the simulator imitates, as test arguments.
enum Release: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case bluez566 = "5.66"
    case bluez587 = "5.87"

    var profile: BlueZProfile {
        switch self {
        case .bluez566: .v5_66
        case .bluez587: .v5_87
        }
    }

    var testDescription: String { "BlueZ \(rawValue)" }
}

/// Paths and names of the standard set-up.
enum Paths {
    static let manager = BlueZService.managerPath
    static let adapter = path("/org/bluez/hci0")
    static let sensor = path("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22")
    static let beacon = path("/org/bluez/hci0/dev_D0_00_00_00_00_01")

    /// The standard Generic Access service 0x1800 at handle 0x0001, claimed by the gap plugin
    /// (exported from 5.80 only): Device Name declaration 0x0002, Appearance 0x0004.
    static let genericAccess = path(sensor.rawValue + "/service0001")
    static let deviceName = path(genericAccess.rawValue + "/char0002")
    static let appearance = path(genericAccess.rawValue + "/char0004")
    /// The standard Generic Attribute service 0x1801 at 0x0006: Service Changed 0x0007, CCC 0x0009.
    static let genericAttribute = path(sensor.rawValue + "/service0006")
    static let serviceChanged = path(genericAttribute.rawValue + "/char0007")
    static let serviceChangedCCC = path(serviceChanged.rawValue + "/desc0009")

    /// Heart Rate service 0x180D at handle 0x000a.
    static let heartRate = path(sensor.rawValue + "/service000a")
    /// 2A37 (notify): declaration 0x000b, value 0x000c, CCC 0x000d.
    static let measurement = path(heartRate.rawValue + "/char000b")
    static let measurementCCC = path(measurement.rawValue + "/desc000d")
    /// 2A38 (read): declaration 0x000e.
    static let location = path(heartRate.rawValue + "/char000e")
    /// 2A39 (write): declaration 0x0010.
    static let controlPoint = path(heartRate.rawValue + "/char0010")

    /// The custom service at 0x0020 (after the 0x000f boundary).
    static let custom = path(sensor.rawValue + "/service0020")
    /// read, write, write-without-response, notify: 0x0021, CCC 0x0023, user description 0x0024.
    static let data = path(custom.rawValue + "/char0021")
    static let dataCCC = path(data.rawValue + "/desc0023")
    static let dataDescription = path(data.rawValue + "/desc0024")
    /// read, write, reliable-write, extended-properties: 0x0025.
    static let reliable = path(custom.rawValue + "/char0025")
    /// write-without-response only: 0x0027.
    static let command = path(custom.rawValue + "/char0027")
    /// indicate only: 0x0029, CCC 0x002b.
    static let indicate = path(custom.rawValue + "/char0029")
    static let indicateCCC = path(indicate.rawValue + "/desc002b")
    /// read only: 0x002c.
    static let readOnly = path(custom.rawValue + "/char002c")

    static func path(_ text: String) -> ObjectPath {
        do { return try ObjectPath(text) } catch { preconditionFailure("bad path literal \(text)") }
    }
}

/// UUIDs of the standard peripherals, as bluetoothd prints them (128-bit, lower-case).
enum UUIDs {
    static let genericAccess = "00001800-0000-1000-8000-00805f9b34fb"
    static let genericAttribute = "00001801-0000-1000-8000-00805f9b34fb"
    static let heartRate = "0000180d-0000-1000-8000-00805f9b34fb"
    static let measurement = "00002a37-0000-1000-8000-00805f9b34fb"
    static let location = "00002a38-0000-1000-8000-00805f9b34fb"
    static let controlPoint = "00002a39-0000-1000-8000-00805f9b34fb"
    static let ccc = "00002902-0000-1000-8000-00805f9b34fb"
    static let userDescription = "00002901-0000-1000-8000-00805f9b34fb"
    static let custom = "12345678-1234-5678-1234-56789abcdef0"
    static let data = "12345678-1234-5678-1234-56789abcdef1"
    static let reliable = "12345678-1234-5678-1234-56789abcdef2"
    static let command = "12345678-1234-5678-1234-56789abcdef3"
    static let indicate = "12345678-1234-5678-1234-56789abcdef4"
    static let readOnly = "12345678-1234-5678-1234-56789abcdef5"
    static let battery = "0000180f-0000-1000-8000-00805f9b34fb"
}

/// The virtual peripherals the tests use.
enum Peripherals {
    static let sensorAddress = "C4:7C:8D:6A:11:22"
    static let beaconAddress = "D0:00:00:00:00:01"

    /// A connectable, discoverable heart-rate sensor with a custom service covering every
    /// write procedure and both notify kinds.
    static func sensor() -> VirtualPeripheral {
        var peripheral = VirtualPeripheral(
            address: sensorAddress, name: "HRM",
            services: [
                VirtualService(
                    uuid: "180D",
                    characteristics: [
                        VirtualCharacteristic(uuid: "2A37", flags: ["notify"], value: [0x00, 0x48]),
                        VirtualCharacteristic(uuid: "2A38", flags: ["read"], value: [0x01]),
                        VirtualCharacteristic(uuid: "2A39", flags: ["write"]),
                    ]),
                VirtualService(
                    uuid: UUIDs.custom,
                    characteristics: [
                        VirtualCharacteristic(
                            uuid: UUIDs.data, flags: ["read", "write", "write-without-response", "notify"],
                            value: HexData(Data("hello".utf8)),
                            descriptors: [VirtualDescriptor(uuid: "2901", value: HexData(Data("Data".utf8)))]),
                        VirtualCharacteristic(
                            uuid: UUIDs.reliable, flags: ["read", "write", "reliable-write", "extended-properties"]),
                        VirtualCharacteristic(uuid: UUIDs.command, flags: ["write-without-response"]),
                        VirtualCharacteristic(uuid: UUIDs.indicate, flags: ["indicate"]),
                        VirtualCharacteristic(uuid: UUIDs.readOnly, flags: ["read"], value: [0x2a]),
                    ]),
            ])
        peripheral.serviceUUIDs = ["180D"]
        peripheral.manufacturerData = [0x004c: [0x02, 0x15]]
        peripheral.serviceData = ["180F": [0x64]]
        peripheral.txPower = -4
        peripheral.rssi = -60
        peripheral.advertisingIntervalMs = 20
        return peripheral
    }

    /// A non-connectable beacon without the discoverable flag (quirk Q13).
    static func beacon() -> VirtualPeripheral {
        var peripheral = VirtualPeripheral(address: beaconAddress, name: "Beacon")
        peripheral.connectable = false
        peripheral.discoverable = false
        peripheral.manufacturerData = [0x0059: [0x01]]
        peripheral.rssi = -70
        peripheral.advertisingIntervalMs = 20
        return peripheral
    }
}

/// Builders of expected trace lines, in ``TranscriptEntry/description`` form.
enum Trace {
    /// `org.bluez.Device1` → `Device1`.
    static func short(_ interface: InterfaceName?) -> String {
        guard let name = interface?.rawValue else { return "-" }
        return String(name.split(separator: ".").last ?? Substring(name))
    }

    /// `★ path PropertiesChanged ('iface', {changes}, invalidated)`; `changes` in GVariant text
    /// without braces, e.g. `'Connected': <true>`.
    static func changed(
        _ path: ObjectPath, _ interface: InterfaceName, _ changes: String = "", invalidated: [String] = []
    ) -> String {
        let dict = changes.isEmpty ? "@a{sv} {}" : "{\(changes)}"
        let names = invalidated.isEmpty ? "@as []" : "[" + invalidated.map { "'\($0)'" }.joined(separator: ", ") + "]"
        return "★ \(path.rawValue) PropertiesChanged ('\(interface.rawValue)', \(dict), \(names))"
    }

    /// `★ InterfacesAdded path [interfaces]`.
    static func added(_ path: ObjectPath, _ interfaces: [String]) -> String {
        "★ InterfacesAdded \(path.rawValue) [\(interfaces.joined(separator: ", "))]"
    }

    /// `★ InterfacesRemoved path [interfaces]`.
    static func removed(_ path: ObjectPath, _ interfaces: [String]) -> String {
        "★ InterfacesRemoved \(path.rawValue) [\(interfaces.joined(separator: ", "))]"
    }

    /// `← Member (body)`.
    static func reply(_ member: String, _ body: String = "()") -> String { "← \(member) \(body)" }

    /// The interface list gdbus gives a BlueZ object with properties.
    static func gdbus(_ interface: InterfaceName) -> [String] {
        [InterfaceName.introspectable.rawValue, interface.rawValue, InterfaceName.properties.rawValue]
    }
}

/// Checks that `error` is the D-Bus error `name` with `message`.
func expectError(
    _ error: DBusError?, _ name: String, _ message: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(error?.name == name, "error name", sourceLocation: sourceLocation)
    #expect(error?.message == message, "error message", sourceLocation: sourceLocation)
}

/// Common calls of the tests.
extension RecordingClient {
    /// SetDiscoveryFilter with `filter` (values wrapped in variants here).
    func setDiscoveryFilter(_ filter: [String: DBusValue], adapter: ObjectPath = Paths.adapter) async -> DBusError? {
        let entries = filter.keys.sorted().map {
            DBusDictionaryEntry(.string($0), .variant(filter[$0] ?? .boolean(false)))
        }
        return await error(
            adapter, BlueZInterface.adapter1, "SetDiscoveryFilter",
            [.dictionary(key: .string, value: .variant, entries)])
    }

    /// StartDiscovery, then waits for `Discovering=true` (unless another session had it on).
    func startDiscovery(waitForDiscovering: Bool = true) async throws {
        let mark = transcript.mark
        try await call(Paths.adapter, BlueZInterface.adapter1, "StartDiscovery")
        if waitForDiscovering {
            try await transcript.first("Discovering=true", since: mark) {
                $0.isPropertiesChanged(Paths.adapter, BlueZInterface.adapter1)
                    && $0.changedProperties["Discovering"] == .boolean(true)
            }
        }
    }

    /// StopDiscovery, then waits for `Discovering=false`.
    func stopDiscovery() async throws {
        let mark = transcript.mark
        try await call(Paths.adapter, BlueZInterface.adapter1, "StopDiscovery")
        try await transcript.first("Discovering=false", since: mark) {
            $0.isPropertiesChanged(Paths.adapter, BlueZInterface.adapter1)
                && $0.changedProperties["Discovering"] == .boolean(false)
        }
    }

    /// Waits for the `InterfacesAdded` of a device object.
    @discardableResult
    func waitForDevice(_ path: ObjectPath, since mark: Int = 0) async throws -> TranscriptEntry {
        try await transcript.first("InterfacesAdded \(path)", since: mark) {
            $0.member == "InterfacesAdded" && $0.objectManagerSubject == path
        }
    }

    /// Scans until the sensor's device object exists, then stops scanning.
    func discoverSensor() async throws {
        let mark = transcript.mark
        try await startDiscovery()
        try await waitForDevice(Paths.sensor, since: mark)
        try await stopDiscovery()
    }

    /// Connect, then waits for `ServicesResolved=true`.
    func connectAndResolve(_ device: ObjectPath = Paths.sensor) async throws {
        let mark = transcript.mark
        try await call(device, BlueZInterface.device1, "Connect")
        try await waitForResolved(device, since: mark)
    }

    /// Waits for `ServicesResolved=true` on `device`.
    func waitForResolved(_ device: ObjectPath = Paths.sensor, since mark: Int) async throws {
        try await transcript.first("ServicesResolved=true", since: mark) {
            $0.isPropertiesChanged(device, BlueZInterface.device1)
                && $0.changedProperties["ServicesResolved"] == .boolean(true)
        }
    }

    /// The `ServicesResolved=true` changes of `device` recorded since `mark`, each with what
    /// bluetoothd announced with it.
    func resolutions(_ device: ObjectPath = Paths.sensor, since mark: Int) -> [TranscriptEntry] {
        transcript.since(mark).filter {
            $0.isPropertiesChanged(device, BlueZInterface.device1)
                && $0.changedProperties["ServicesResolved"] == .boolean(true)
        }
    }

    /// Discovers and connects the sensor; returns the `ServicesResolved=true` signal of the
    /// connection, as recorded.
    func connectSensorResolution() async throws -> String? {
        try await discoverSensor()
        let mark = transcript.mark
        try await connectAndResolve()
        return resolutions(since: mark).first?.description
    }

    /// Waits for `Connected=false` on `device`.
    func waitForDisconnected(_ device: ObjectPath = Paths.sensor, since mark: Int) async throws {
        try await transcript.first("Connected=false", since: mark) {
            $0.isPropertiesChanged(device, BlueZInterface.device1)
                && $0.changedProperties["Connected"] == .boolean(false)
        }
    }

    /// Changes a discovered peripheral's advertised data three times, each time waiting until
    /// its device reports it: proof that the simulated radio went through more than one whole
    /// advertising interval plus `advDelay` (every peripheral here advertises every 20 ms, at
    /// its own phase), so a device that is still missing was dropped, not merely not yet seen.
    func awaitReportRound(
        _ simulator: Simulator, address: String = Peripherals.sensorAddress, path: ObjectPath = Paths.sensor
    ) async throws {
        for round in UInt8(1)...3 {
            let mark = transcript.mark
            let stamp = UInt8.random(in: 0...84) * 3 + round
            try simulator.updatePeripheral(address: address) { $0.manufacturerData[0xffff] = [stamp] }
            try await transcript.first("report round \(round) on \(path)", since: mark) {
                guard $0.isPropertiesChanged(path, BlueZInterface.device1),
                    case .dictionary(_, _, let entries)? = $0.changedProperties["ManufacturerData"]
                else { return false }
                return entries.contains { $0.key == .uint16(0xffff) && $0.value == .variant(.bytes(Data([stamp]))) }
            }
        }
    }

    /// Discovers and connects the sensor, services resolved.
    func connectSensor() async throws {
        try await discoverSensor()
        try await connectAndResolve()
    }
}
