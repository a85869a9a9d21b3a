import BLE
import BLESimulator
import Foundation
import Testing

/// `Peripheral.discoverServices` and `characteristic(_:in:)`: services, included services,
/// characteristics with their properties, descriptors.
@Suite("GATT discovery", .timeLimit(.minutes(1)))
struct GattDiscoveryTests {
    static let sensor = TestPeripherals.sensorAddress

    static func run(
        profile: BlueZProfile = .v5_66, _ body: @escaping (SimulatorFixture, Central, Peripheral) async throws -> Void
    ) async throws {
        try await SimulatorFixture.run(profile: profile, peripherals: [TestPeripherals.sensor()]) { fixture in
            let (central, peripheral) = try await fixture.connected(Self.sensor)
            try await body(fixture, central, peripheral)
            await central.close()
        }
    }

    @Test("all services, in handle order, with their characteristics", arguments: [BlueZProfile.v5_66, .v5_87])
    func allServices(profile: BlueZProfile) async throws {
        try await Self.run(profile: profile) { _, _, peripheral in
            let services = try await peripheral.discoverServices()
            // The peer's standard services come first: Generic Attribute, and from 5.80 the
            // claimed Generic Access too.
            let standard = profile.exportsClaimedServices ? ["1800", "1801"] : ["1801"]
            let standardHandles: [UInt16?] = profile.exportsClaimedServices ? [0x0001, 0x0006] : [0x0006]
            #expect(services.map(\.uuid) == (standard + ["180D", "180F", "180A"]).map { BluetoothUUID($0) })
            #expect(services.allSatisfy { $0.isPrimary })
            #expect(
                services.map(\.handle) == standardHandles + [0x000a, 0x0020, 0x0030],
                "from Handle (5.87) or the object path (5.66)")
            let gatt = try #require(services.first { $0.uuid == BluetoothUUID("1801") })
            #expect(gatt.characteristics.map(\.uuid) == [BluetoothUUID("2A05")])
            #expect(gatt.characteristics.first?.properties == [.indicate])
            let heartRate = try #require(services.first { $0.uuid == BluetoothUUID("180D") })
            #expect(heartRate.characteristics.map(\.uuid) == ["2A37", "2A38", "2A39"].map { BluetoothUUID($0) })
            #expect(heartRate.characteristics.map(\.handle) == [0x000b, 0x000f, 0x0011])
            #expect(heartRate.characteristics.allSatisfy { $0.serviceUUID == BluetoothUUID("180D") })
            #expect(Set(services.map(\.id)).count == services.count)
        }
    }

    @Test("discoverServices([uuids]) returns only those services")
    func filtered() async throws {
        try await Self.run { _, _, peripheral in
            let services = try await peripheral.discoverServices([BluetoothUUID("180F"), BluetoothUUID("1234")])
            #expect(services.map(\.uuid) == [BluetoothUUID("180F")])
            #expect(try await peripheral.discoverServices([]).isEmpty)
            let long = try await peripheral.discoverServices([BluetoothUUID("0000180a-0000-1000-8000-00805f9b34fb")])
            #expect(long.map(\.uuid) == [BluetoothUUID("180A")], "UUIDs compare canonically")
        }
    }

    @Test("included services are listed")
    func includedServices() async throws {
        try await Self.run { _, _, peripheral in
            let services = try await peripheral.discoverServices()
            let heartRate = try #require(services.first { $0.uuid == BluetoothUUID("180D") })
            let battery = try #require(services.first { $0.uuid == BluetoothUUID("180F") })
            #expect(heartRate.includedServices.map(\.uuid) == [BluetoothUUID("180F")])
            // The included service is the battery service itself, with its characteristics.
            #expect(heartRate.includedServices.first == battery)
            #expect(
                heartRate.includedServices.first?.characteristics.map(\.uuid) == battery.characteristics.map(\.uuid))
            #expect(battery.includedServices.isEmpty)
        }
    }

    // Two services of no plugin's (a plugin's, such as HID's, would be hidden by bluetoothd).
    static let loopA = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
    static let loopB = "6e400011-b5a3-f393-e0a9-e50e24dcca9e"

    @Test("services that include each other (a loop): each include is listed, the loop stops")
    func includeLoop() async throws {
        let first = VirtualService(
            uuid: Self.loopA, includes: [Self.loopB],
            characteristics: [VirtualCharacteristic(uuid: "2A47", flags: ["read"], value: [0x01])])
        let second = VirtualService(
            uuid: Self.loopB, includes: [Self.loopA],
            characteristics: [VirtualCharacteristic(uuid: "2A4A", flags: ["read"], value: [0x02])])
        let looping = VirtualPeripheral(address: Self.sensor, name: "Loop", services: [first, second])
        try await SimulatorFixture.run(peripherals: [looping]) { fixture in
            let (central, peripheral) = try await fixture.connected(Self.sensor)
            let services = try await peripheral.discoverServices([BluetoothUUID(Self.loopA), BluetoothUUID(Self.loopB)])
            let outer = try #require(services.first { $0.uuid == BluetoothUUID(Self.loopA) })
            let included = try #require(outer.includedServices.first)
            #expect(included.uuid == BluetoothUUID(Self.loopB))
            #expect(included.characteristics.map(\.uuid) == [BluetoothUUID("2A4A")])
            // B includes A again: listed, without going round once more.
            #expect(included.includedServices.map(\.uuid) == [BluetoothUUID(Self.loopA)])
            #expect(included.includedServices.first?.includedServices.isEmpty == true)
            await central.close()
        }
    }

    @Test("several characteristics with one UUID are all reachable")
    func duplicateUUIDs() async throws {
        try await Self.run { _, _, peripheral in
            let battery = try #require(try await peripheral.discoverServices([BluetoothUUID("180F")]).first)
            let levels = battery.characteristics.filter { $0.uuid == BluetoothUUID("2A19") }
            #expect(levels.count == 2)
            #expect(levels[0] !== levels[1])
            var values: [Data] = []
            for level in levels { values.append(try await level.read()) }
            #expect(values == [Data([0x64]), Data([0x32])])
            #expect(levels[0].properties == [.read, .notify])
            #expect(levels[1].properties == [.read])
            // characteristic(_:in:) is the first one.
            #expect(try await peripheral.characteristic(BluetoothUUID("2A19"), in: BluetoothUUID("180F")) === levels[0])
        }
    }

    @Test("characteristic properties from BlueZ's flags")
    func properties() async throws {
        try await Self.run { _, _, peripheral in
            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            #expect(control.properties == [.read, .write, .writeWithoutResponse])
            #expect(control.properties.description == "read,write-without-response,write")
            let rate = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
            #expect(rate.properties.contains(.notify))
            #expect(!rate.properties.contains(.indicate))
        }
    }

    @Test("descriptors are listed, the CCC (2902) among them")
    func descriptors() async throws {
        try await Self.run(profile: .v5_87) { _, _, peripheral in
            let rate = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
            #expect(rate.descriptors.map(\.uuid) == [BluetoothUUID("2902"), BluetoothUUID("2901")])
            #expect(rate.descriptors.map(\.handle) == [0x000d, 0x000e])
            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            #expect(
                control.descriptors.map(\.uuid) == [
                    BluetoothUUID("2901"), BluetoothUUID("12345678-1234-5678-1234-56789abcdef0"),
                ])
            let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            #expect(location.descriptors.isEmpty)
        }
    }

    @Test("the same Characteristic object for the same attribute")
    func stableObjects() async throws {
        try await Self.run { _, _, peripheral in
            let first = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            let again = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            #expect(first === again)
            #expect(first.peripheral === peripheral)
        }
    }

    @Test("a reconnection discovers the same objects, built once; a services change builds new ones")
    func keptAcrossReconnections() async throws {
        try await Self.run { fixture, central, peripheral in
            let before = try await peripheral.discoverServices()
            try await peripheral.disconnect()
            _ = try await central.connect(peripheral.id)
            let after = try await peripheral.discoverServices()
            #expect(after.map(\.id) == before.map(\.id))
            let pairs = zip(before.flatMap(\.characteristics), after.flatMap(\.characteristics))
            #expect(pairs.allSatisfy { $0 === $1 }, "the peripheral keeps the objects it handed out")

            // A new database (Service Changed): discovery hands out new objects.
            let events = peripheral.events
            try fixture.simulator.updatePeripheral(address: Self.sensor, ServicesChangedTests.newDatabase)
            _ = try await first(events) { $0 == .servicesChanged }
            // The old objects go before the new ones come: discovery follows the mirror.
            try await eventually("the new database is discovered") {
                (try? await peripheral.discoverServices())?.flatMap(\.characteristics).contains {
                    $0.uuid == BluetoothUUID("2A97")
                } ?? false
            }
            let changed = try await peripheral.discoverServices()
            let replacement = try #require(
                changed.flatMap(\.characteristics).first { $0.uuid == BluetoothUUID("2A97") })
            #expect(!before.flatMap(\.characteristics).contains { $0 === replacement })
            #expect(try await peripheral.discoverServices().flatMap(\.characteristics).contains { $0 === replacement })
        }
    }

    @Test("releasing the central releases its peripherals and the characteristics they keep")
    func releasedWithTheCentral() async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            weak var weakPeripheral: Peripheral?
            weak var weakCharacteristic: Characteristic?
            do {
                let central = try await Central(bus: .address(fixture.bus.address), adapter: "hci0")
                let peripheral = try await central.connect(try PeripheralID(address: Self.sensor))
                weakCharacteristic = try await peripheral.characteristic(
                    BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
                weakPeripheral = peripheral
                try await peripheral.disconnect()
                await central.close()
            }
            // Release runs as the last task holding them ends: wait a moment for it.
            let deadline = ContinuousClock.now + .seconds(5)
            while weakPeripheral != nil || weakCharacteristic != nil, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(weakPeripheral == nil)
            #expect(weakCharacteristic == nil)
        }
    }

    @Test("a characteristic that is not there is notFound")
    func notFound() async throws {
        try await Self.run { _, _, peripheral in
            let missing = await bleError {
                try await peripheral.characteristic(BluetoothUUID("2A99"), in: BluetoothUUID("180D"))
            }
            #expect(missing?.code == .notFound)
            let wrongService = await bleError {
                try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180F"))
            }
            #expect(wrongService?.code == .notFound)
        }
    }

    @Test("discovery needs a connection")
    func notConnected() async throws {
        try await Self.run { _, _, peripheral in
            try await peripheral.disconnect()
            #expect(await bleError { try await peripheral.discoverServices() }?.code == .notConnected)
        }
    }

    @Test("names of SIG UUIDs")
    func names() async throws {
        try await Self.run { _, _, peripheral in
            let services = try await peripheral.discoverServices()
            #expect(
                services.map { $0.uuid.name } == ["Generic Attribute", "Heart Rate", "Battery", "Device Information"])
            #expect(services[0].characteristics.map { $0.uuid.name } == ["Service Changed"])
            #expect(
                services[1].characteristics.map { $0.uuid.name } == [
                    "Heart Rate Measurement", "Body Sensor Location", "Heart Rate Control Point",
                ])
        }
    }
}
