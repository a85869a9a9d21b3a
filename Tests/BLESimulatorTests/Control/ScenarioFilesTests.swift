import BLESimulator
import BlueZ
import DBus
import DBusTestSupport
import Foundation
import Testing

/// The example scenarios shipped in `Scenarios/`: each one loads and runs.
@Suite struct ScenarioFilesTests {
    /// `Scenarios/`, found from this file: Tests/BLESimulatorTests/Control/ → the package root.
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scenarios")

    /// Every `*.json` in the folder (empty if it cannot be listed; ``theExamplesAreThere()``
    /// then fails, so a missing folder cannot pass silently).
    static let files: [String] =
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { $0.hasSuffix(".json") }.sorted()

    private static func load(_ name: String) throws -> Scenario {
        try Scenario.load(from: folder.appendingPathComponent(name))
    }

    @Test func theExamplesAreThere() {
        let expected = [
            "battery.json", "beacon-crowd.json", "device-information.json", "heart-rate-monitor.json",
            "large-gatt-device.json", "thermometer.json",
        ]
        #expect(Set(expected).isSubset(of: Set(Self.files)), "found \(Self.files) in \(Self.folder.path)")
    }

    @Test(arguments: files)
    func scenarioLoadsAndStartsASimulator(file: String) async throws {
        let scenario = try Self.load(file)
        try await withTestBus { bus in
            let simulator = try await Simulator.start(
                on: .address(bus.address), profile: try scenario.blueZProfile(), options: scenario.simulatorOptions,
                peripherals: scenario.peripherals)
            defer { simulator.stop() }
            #expect(simulator.isRunning)
            #expect(simulator.peripherals.count == Set(scenario.peripherals.map(\.address)).count)
            #expect(simulator.peripherals.count == scenario.peripherals.count, "duplicate addresses in \(file)")
        }
    }

    @Test func beaconCrowdIsAThousandNonConnectableOnceASecondAdvertisers() throws {
        let beacons = try Self.load("beacon-crowd.json").peripherals
        #expect(beacons.count == 1_000)
        #expect(beacons.allSatisfy { !$0.connectable && $0.advertisingIntervalMs == 1_000 })
        #expect(beacons.allSatisfy { $0.manufacturerData[0x004C]?.data.count == 23 && $0.services.isEmpty })
    }

    @Test func largeGattDeviceHasEightByEightWithUserDescriptions() throws {
        let device = try #require(try Self.load("large-gatt-device.json").peripherals.first)
        #expect(device.services.count == 8)
        #expect(device.services.allSatisfy { $0.characteristics.count == 8 })
        let characteristics = device.services.flatMap(\.characteristics)
        #expect(characteristics.allSatisfy { $0.descriptors.map(\.uuid) == ["2901"] })
    }

    @Test func thermometerIndicatesPeriodically() throws {
        let thermometer = try #require(try Self.load("thermometer.json").peripherals.first)
        let measurement = try #require(thermometer.services.first?.characteristics.first { $0.uuid == "2A1C" })
        #expect(measurement.flags == ["indicate"])
        #expect(measurement.notifyIntervalMs != nil && !measurement.notifyValues.isEmpty)
    }

    @Test func deviceInformationStringsAreUTF8() throws {
        let info = try #require(try Self.load("device-information.json").peripherals.first)
        let values = Dictionary(
            uniqueKeysWithValues: (info.services.first?.characteristics ?? []).map {
                ($0.uuid, String(decoding: $0.value.data, as: UTF8.self))
            })
        #expect(values["2A29"] == "swift-ble" && values["2A24"] == "SIM-1000" && values["2A26"] == "1.4.2")
    }

    /// Its GATT Device Name differs from the advertised one and it has a PnP ID: bluetoothd's
    /// gap plugin renames the device at connection, the deviceinfo plugin sets `Modalias`.
    @Test func deviceInformationIsRenamedAndGetsAModalias() async throws {
        let scenario = try Self.load("device-information.json")
        let info = try #require(scenario.peripherals.first)
        #expect(info.name == "Device Info (sim)")
        try await ControlHarness.withSimulator(peripherals: scenario.peripherals) { _, _, client in
            let device = try await ControlHarness.connect(client, address: info.address)
            let name = try await ControlHarness.bluez(
                client, device, .properties, "Get",
                [.string(BlueZInterface.device1.rawValue), .string("Name")])
            #expect(try name.argument(0, as: DBusValue.self).unwrappingVariant == .string("SIM-1000 0042"))
            let modalias = try await ControlHarness.bluez(
                client, device, .properties, "Get",
                [.string(BlueZInterface.device1.rawValue), .string("Modalias")])
            #expect(try modalias.argument(0, as: DBusValue.self).unwrappingVariant == .string("usb:v1D6Bp1000d1402"))
        }
    }

    /// BlueZ 5.55–5.79 export the Battery Service as GATT objects (its plugin is marked
    /// external, so it does not claim 0x180F), and so does the simulator; see the README.
    @Test func batteryServiceIsExportedAsGattObjects() async throws {
        let scenario = try Self.load("battery.json")
        let battery = try #require(scenario.peripherals.first)
        try await ControlHarness.withSimulator(peripherals: scenario.peripherals) { _, _, client in
            let device = try await ControlHarness.connect(client, address: battery.address)
            let path = try await ControlHarness.characteristicPath(client, device: device, uuid: "2A19")
            let reply = try await ControlHarness.bluez(
                client, path, BlueZInterface.gattCharacteristic1, "ReadValue",
                [.dictionary(key: .string, value: .variant, [])])
            #expect(try reply.argument(0, as: Data.self) == Data([0x64]))
        }
    }
}
