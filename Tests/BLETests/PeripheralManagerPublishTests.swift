import BLE
import BLESimulator
import Foundation
import Testing

/// Publishing GATT services: what bluetoothd holds after RegisterApplication, adding and
/// removing services later, failures, cancellation, close, and a bluetoothd restart.
@Suite("PeripheralManager: publishing services")
struct PeripheralManagerPublishTests {
    @Test("add() exports the tree under an object manager and registers it; bluetoothd sees every attribute")
    func publishes() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            try await manager.add(TestServices.heartRate)
            try await manager.add(TestServices.secured)
            let applications = fixture.simulator.registeredApplications
            #expect(applications.count == 1)
            let services = try #require(applications.first?.services)
            #expect(services.map(\.uuid) == [BluetoothUUID("180D").uuidString, TestServices.secured.uuid.uuidString])
            let heartRate = services[0].characteristics
            #expect(heartRate.map(\.uuid) == ["2A37", "2A38", "2A39", "2A3A"].map { BluetoothUUID($0).uuidString })
            #expect(heartRate[0].flags == ["notify"])
            #expect(heartRate[0].supportsAcquireNotify)
            #expect(heartRate[1].flags == ["read"])
            #expect(heartRate[2].flags == ["read", "write", "write-without-response", "authorize"])
            #expect(heartRate[2].descriptors.map(\.uuid) == [BluetoothUUID("2901").uuidString])
            #expect(heartRate[3].flags == ["indicate"])
            let secured = services[1].characteristics[0]
            #expect(secured.flags == ["encrypt-authenticated-read", "encrypt-write"])
            #expect(secured.descriptors.first?.flags == ["read", "write"])
            #expect(await manager.publishedServices.map(\.uuid) == ["180D", TestServices.secured.uuid])
        }
    }

    @Test("An included service is registered with the path of the service it includes")
    func includedServices() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            try await manager.add(TestServices.battery)
            var including = TestServices.heartRate
            including.includedServices = ["180F"]
            try await manager.add(including)
            let services = try #require(fixture.simulator.registeredApplications.first?.services)
            #expect(services.count == 2)
            let battery = try #require(services.first { $0.uuid == BluetoothUUID("180F").uuidString })
            let heartRate = try #require(services.first { $0.uuid == BluetoothUUID("180D").uuidString })
            #expect(heartRate.includes == [battery.path])
            var dangling = TestServices.secured
            dangling.includedServices = ["1234"]
            let error = await bleError { try await manager.add(dangling) }
            #expect(error?.code == .invalidArguments)
        }
    }

    @Test("remove() drops one service (InterfacesRemoved); the last one unregisters the application")
    func removes() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let heartRate = try await manager.add(TestServices.heartRate)
            let battery = try await manager.add(TestServices.battery)
            try await manager.remove(heartRate)
            try await eventually("the service is gone") {
                fixture.simulator.registeredApplications.first?.services.map(\.uuid)
                    == [BluetoothUUID("180F").uuidString]
            }
            await #expect(throws: BLEError.self) { try await manager.remove(heartRate) }
            try await manager.remove(battery)
            #expect(fixture.simulator.registeredApplications.isEmpty)
            // Published again from scratch.
            try await manager.add(TestServices.battery)
            #expect(fixture.simulator.registeredApplications.first?.services.count == 1)
            try await manager.removeAllServices()
            #expect(fixture.simulator.registeredApplications.isEmpty)
            #expect(await manager.publishedServices.isEmpty)
        }
    }

    @Test("Services bluetoothd would refuse are typed errors, and nothing is registered")
    func refusesInvalidServices() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let gap = MutableService(
                uuid: "1800", characteristics: [MutableCharacteristic(uuid: "2A00", properties: [.read])])
            let writableStatic = MutableService(
                uuid: "180A",
                characteristics: [MutableCharacteristic(uuid: "2A29", properties: [.write], value: Data([1]))])
            let noProperties = MutableService(
                uuid: "180A", characteristics: [MutableCharacteristic(uuid: "2A29", properties: [])])
            let ccc = MutableService(
                uuid: "180A",
                characteristics: [
                    MutableCharacteristic(
                        uuid: "2A29", properties: [.notify], descriptors: [MutableDescriptor(uuid: "2902")])
                ])
            let badUUID = MutableService(uuid: BluetoothUUID("not-a-uuid"))
            for service in [gap, writableStatic, noProperties, ccc, badUUID] {
                let error = await bleError { try await manager.add(service) }
                #expect(error?.code == .invalidArguments)
            }
            #expect(fixture.simulator.registeredApplications.isEmpty)
            #expect(await manager.publishedServices.isEmpty)
        }
    }

    @Test("close() unregisters the application and ends the streams")
    func closeUnregisters() async throws {
        try await SimulatorFixture.run(peripherals: []) { fixture in
            let manager = try await PeripheralManager(bus: .address(fixture.bus.address), adapter: "hci0")
            try await manager.waitUntilPoweredOn(timeout: .seconds(5))
            try await manager.add(TestServices.heartRate)
            #expect(fixture.simulator.registeredApplications.count == 1)
            let states = manager.states
            await manager.close()
            #expect(fixture.simulator.registeredApplications.isEmpty)
            var ended = false
            for await _ in states {}
            ended = true
            #expect(ended)
            // A closed manager fails fast with a typed error instead of waiting.
            let error = await bleError { try await manager.add(TestServices.battery) }
            #expect(error?.code == .bluetoothUnavailable)
            await manager.close()
        }
    }

    @Test("Releasing the manager leaves the bus, and bluetoothd drops the application")
    func releaseDropsRegistration() async throws {
        try await SimulatorFixture.run(peripherals: []) { fixture in
            var manager: PeripheralManager? = try await PeripheralManager(
                bus: .address(fixture.bus.address), adapter: "hci0")
            try await manager?.waitUntilPoweredOn(timeout: .seconds(5))
            try await manager?.add(TestServices.battery)
            #expect(fixture.simulator.registeredApplications.count == 1)
            manager = nil
            try await eventually("bluetoothd dropped the application") {
                fixture.simulator.registeredApplications.isEmpty
            }
        }
    }

    @Test("A cancelled add() takes its service back; the manager keeps working")
    func cancelledAdd() async throws {
        var options = SimulatorOptions()
        options.serverRequestTimeout = .seconds(5)
        try await SimulatorFixture.withManager(simulatorOptions: options) { fixture, manager in
            try await manager.add(TestServices.battery)
            let task = Task { try await manager.add(TestServices.heartRate) }
            task.cancel()
            _ = await task.result
            try await eventually("only the battery service is registered") {
                fixture.simulator.registeredApplications.first?.services.map(\.uuid)
                    == [BluetoothUUID("180F").uuidString]
            }
            let handles = await manager.publishedServices
            #expect(handles.map(\.uuid) == ["180F"])
            try await manager.add(TestServices.secured)
            #expect(fixture.simulator.registeredApplications.first?.services.count == 2)
        }
    }

    @Test("bluetoothd restarting forgets the application; the manager registers it again (republished)")
    func republishesAfterRestart() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let events = try await manager.publishHeartRate()
            try await fixture.simulator.remoteSubscribe(to: "2A37")
            _ = try await nextEvent(events) { if case .subscribed = $0 { true } else { false } }
            try await fixture.simulator.restartDaemon(downtime: .milliseconds(100))
            // The subscription died with bluetoothd.
            let unsubscribed = try await nextEvent(events) { if case .unsubscribed = $0 { true } else { false } }
            #expect(unsubscribed != nil)
            let event = try await nextEvent(events) { if case .republished = $0 { true } else { false } }
            #expect(event != nil)
            #expect(await !manager.isNotifying("2A37"))
            #expect(fixture.simulator.registeredApplications.first?.services.count == 1)
            #expect(fixture.simulator.advertisements.first?.localName == "swift-ble")
            #expect(await manager.state == .poweredOn)
            // Requests reach the app again.
            let value = try await fixture.simulator.remoteRead(characteristic: "2A38")
            #expect(value == Data([0x01, 0x02, 0x03]))
        }
    }
}

/// The scoped helper: whatever ends the scope, the registrations are taken back over the bus.
@Suite("PeripheralManager: scoped use")
struct PeripheralManagerScopeTests {
    @Test("Cancelling the task of withPeripheralManager unregisters the services and the advertisement")
    func cancellationUnregisters() async throws {
        try await SimulatorFixture.run(peripherals: []) { fixture in
            let log = LogRecorder()
            var options = PeripheralManagerOptions()
            options.logger = log.logger
            let simulator = fixture.simulator
            let published = AsyncStream<Void>.makeStream()
            let address = fixture.bus.address
            let scope = Task {
                try await withPeripheralManager(bus: .address(address), adapter: "hci0", options: options) {
                    manager throws(BLEError) in
                    try await manager.waitUntilPoweredOn(timeout: .seconds(5))
                    try await manager.add(TestServices.battery)
                    try await manager.startAdvertising(Advertisement(localName: "scoped"))
                    published.continuation.yield()
                    try? await Task.sleep(for: .seconds(60))
                }
            }
            for await _ in published.stream { break }
            #expect(simulator.registeredApplications.count == 1)
            #expect(simulator.advertisements.count == 1)
            scope.cancel()
            try await scope.value
            #expect(simulator.registeredApplications.isEmpty)
            #expect(simulator.advertisements.isEmpty)
            // Sent by the manager, not inferred by bluetoothd from the connection closing.
            #expect(log.count("UnregisterApplication -> ", suffix: true) == 1)
            #expect(log.count("UnregisterAdvertisement -> ", suffix: true) == 1)
        }
    }
}

/// The manager's adapter state, derived as the central's.
@Suite("PeripheralManager: state")
struct PeripheralManagerStateTests {
    @Test("states follows the adapter: poweredOff and back to poweredOn")
    func followsPower() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            #expect(await manager.state == .poweredOn)
            let states = manager.states
            fixture.simulator.setPowered(false)
            #expect(try await first(states, where: { $0 == .poweredOff }) == .poweredOff)
            fixture.simulator.setPowered(true)
            try await manager.waitUntilPoweredOn(timeout: .seconds(5))
            #expect(await manager.state == .poweredOn)
        }
    }

    @Test("An adapter name that is not one is invalidArguments")
    func badAdapter() async throws {
        try await SimulatorFixture.run(peripherals: []) { fixture in
            let error = await bleError {
                try await PeripheralManager(bus: .address(fixture.bus.address), adapter: "wlan0")
            }
            #expect(error?.code == .invalidArguments)
        }
    }
}
