import BLE
import BLESimulator
import Foundation
import Testing

/// `Peripheral.name` follows bluetoothd: the advertised name until the gap plugin reads the
/// peer's GATT Device Name at connection, which renames the device when it differs.
@Suite("Peripheral name", .timeLimit(.minutes(1)))
struct PeripheralNameTests {
    static let hrm = SimulatorFixture.heartRateAddress

    @Test("the advertised name before connecting, the GATT Device Name once services are resolved")
    func nameFollowsGATT() async throws {
        var monitor = SimulatorFixture.heartRateMonitor(name: "HRM")
        monitor.standardServices = StandardServices(deviceName: "Polar H10 6A11")
        try await SimulatorFixture.run(peripherals: [monitor]) { fixture in
            let central = try await fixture.poweredCentral()
            let discovery = try #require(try await first(central.scan()) { $0.id.address == Self.hrm })
            #expect(discovery.name == "HRM")
            let peripheral = try await central.connect(discovery.id, timeout: .seconds(10))
            let services = try await peripheral.discoverServices()
            #expect(services.map(\.uuid) == [BluetoothUUID("1801"), BluetoothUUID("180D")])
            #expect(await peripheral.name == "Polar H10 6A11")
            await central.close()
        }
    }

    @Test("without standard services the advertised name stays")
    func advertisedNameStays() async throws {
        var monitor = SimulatorFixture.heartRateMonitor(name: "HRM")
        monitor.standardServices = nil
        try await SimulatorFixture.run(peripherals: [monitor]) { fixture in
            let (central, peripheral) = try await fixture.connected(Self.hrm)
            #expect(try await peripheral.discoverServices().map(\.uuid) == [BluetoothUUID("180D")])
            #expect(await peripheral.name == "HRM")
            await central.close()
        }
    }
}
