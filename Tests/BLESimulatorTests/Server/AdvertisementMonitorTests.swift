import BLESimulator
import BlueZ
import DBus
import DBusTestSupport
import Foundation
import Testing

/// The simulator's `AdvertisementMonitorManager1` (passive scanning), as an application sees
/// it on the bus: offered only by an experimental daemon; valid monitors activated and told of
/// matching advertisers with `DeviceFound`, the others released; no discovery started.
@Suite("Advertisement monitors", .timeLimit(.minutes(1)))
struct AdvertisementMonitorTests {
    static let heartRate = "C4:7C:8D:6A:11:22"
    static let battery = "C4:7C:8D:6A:11:33"

    static func advertiser(_ address: String, service: String) -> VirtualPeripheral {
        var peripheral = VirtualPeripheral(address: address, name: "P \(service)")
        peripheral.serviceUUIDs = [service]
        peripheral.advertisingIntervalMs = 20
        return peripheral
    }

    static func run(experimental: Bool, _ body: (Simulator, TestApplication) async throws -> Void) async throws {
        try await withTestBus { bus in
            var options = SimulatorOptions()
            options.experimental = experimental
            let simulator = try await Simulator.start(
                on: .address(bus.address), options: options,
                peripherals: [advertiser(heartRate, service: "180D"), advertiser(battery, service: "180F")])
            defer { simulator.stop() }
            let app = try await TestApplication.connect(bus)
            defer { app.close() }
            try await body(simulator, app)
        }
    }

    /// Waits until the simulator has delivered `count` more advertising reports: both
    /// advertisers send every 20 ms, so by then the other one has been heard (and matched
    /// nothing) too. Progress of the radio, not a pause.
    static func afterMoreReports(_ simulator: Simulator, _ count: Int = 5) async throws {
        let mark = simulator.statistics.advertisementsDelivered
        try await eventually { simulator.statistics.advertisementsDelivered >= mark + count }
    }

    /// `0x03 0x0D 0x18` at 0: a complete list of 16-bit UUIDs starting with Heart Rate.
    static let heartRatePattern = MonitorPattern(start: 0, adType: 0x03, content: Data([0x0D, 0x18]))

    @Test("without --experimental the adapter has no AdvertisementMonitorManager1")
    func notOffered() async throws {
        try await Self.run(experimental: false) { _, app in
            let error = await registrationError { () async throws(DBusError) in try await app.registerMonitor() }
            #expect(
                error?.name == "org.freedesktop.DBus.Error.UnknownInterface"
                    || error?.name == "org.freedesktop.DBus.Error.UnknownMethod")
        }
    }

    @Test("a valid monitor is activated and finds only the matching advertiser; discovery stays off")
    func valid() async throws {
        try await Self.run(experimental: true) { simulator, app in
            try app.exportMonitor("good", AdvertisementMonitorProperties(patterns: [Self.heartRatePattern]))
            try await app.registerMonitor()
            try await app.log.wait(for: "Activate", path: app.path("good"))
            let found = try await app.log.wait(for: "DeviceFound", path: app.path("good"))
            #expect(
                found.first?.body == [
                    .objectPath(
                        try BlueZPath.device(try BluetoothAddress(Self.heartRate), adapter: ServerHarness.adapter))
                ])
            try await Self.afterMoreReports(simulator)
            #expect(app.log.calls("DeviceFound").count == 1, "once per advertiser, and not the battery one")
            let discovering = try await app.connection.call(
                destination: BlueZService.busName, path: ServerHarness.adapter, interface: .properties,
                member: BlueZMethod.get, arguments: [.string(BlueZInterface.adapter1.rawValue), .string("Discovering")])
            #expect(discovering.body.first == .variant(.boolean(false)))
            let again = await registrationError { () async throws(DBusError) in try await app.registerMonitor() }
            #expect(again?.name == BlueZErrorName.alreadyExists)
            try await app.unregisterMonitor()
            let gone = await registrationError { () async throws(DBusError) in try await app.unregisterMonitor() }
            #expect(gone?.name == BlueZErrorName.doesNotExist)
        }
    }

    @Test("a monitor bluetoothd refuses is released, never activated: bad AD type, content past byte 31, no patterns")
    func refused() async throws {
        try await Self.run(experimental: true) { simulator, app in
            try app.exportMonitor(
                "type",
                AdvertisementMonitorProperties(patterns: [MonitorPattern(start: 0, adType: 0x50, content: Data([1]))]))
            try app.exportMonitor(
                "long",
                AdvertisementMonitorProperties(patterns: [
                    MonitorPattern(start: 30, adType: 0x03, content: Data([1, 2]))
                ]))
            try app.exportMonitor("none", AdvertisementMonitorProperties(patterns: []))
            // A valid one beside them makes the adapter listen, so the refused ones would hear.
            try app.exportMonitor("good", AdvertisementMonitorProperties(patterns: [Self.heartRatePattern]))
            try await app.registerMonitor()
            try await app.log.wait(for: "Release", count: 3)
            #expect(app.log.calls("Release").allSatisfy { $0.path != app.path("good") })
            try await app.log.wait(for: "DeviceFound", path: app.path("good"))
            try await Self.afterMoreReports(simulator)
            #expect(app.log.calls("Activate").map(\.path) == [app.path("good")])
            #expect(app.log.calls("DeviceFound").allSatisfy { $0.path == app.path("good") })
        }
    }
}

extension TestApplication {
    /// Exports an `AdvertisementMonitor1` at `root/<name>` whose calls are recorded.
    func exportMonitor(_ name: String, _ properties: AdvertisementMonitorProperties) throws {
        let log = self.log
        let record: @Sendable (DBusMessage) -> [DBusValue] = { call in
            log.record(call)
            return []
        }
        let object = try Signature("o")
        try connection.export(
            [
                ExportedInterface(
                    BlueZInterface.advertisementMonitor1,
                    methods: [
                        .immediate(BlueZMethod.release, handler: record),
                        .immediate(BlueZMethod.activate, handler: record),
                        .immediate(BlueZMethod.deviceFound, in: object, handler: record),
                        .immediate(BlueZMethod.deviceLost, in: object, handler: record),
                    ],
                    properties: properties.dbusProperties.sorted { $0.key < $1.key }.map {
                        ExportedProperty($0.key, value: $0.value)
                    })
            ], at: path(name))
    }

    func registerMonitor() async throws(DBusError) {
        _ = try await connection.call(
            destination: BlueZService.busName, path: adapter, interface: BlueZInterface.advertisementMonitorManager1,
            member: BlueZMethod.registerMonitor, arguments: [.objectPath(root)], timeout: .seconds(10))
    }

    func unregisterMonitor() async throws(DBusError) {
        _ = try await connection.call(
            destination: BlueZService.busName, path: adapter, interface: BlueZInterface.advertisementMonitorManager1,
            member: BlueZMethod.unregisterMonitor, arguments: [.objectPath(root)], timeout: .seconds(10))
    }
}
