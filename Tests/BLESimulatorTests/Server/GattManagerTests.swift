import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// `GattManager1.RegisterApplication` / `UnregisterApplication` (bluez-dbus-api.md §5.1, §5.2).
@Suite("Server: GATT application registration")
struct GattManagerTests {
    @Test("Registration reads the tree, places handles and writes them back into Handle properties")
    func registersAndWritesHandlesBack() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try app.export([ServerFixtures.heartRate, ServerFixtures.battery])
            try await app.registerApplication()

            let registered = try #require(simulator.registeredApplications.first)
            #expect(simulator.registeredApplications.count == 1)
            #expect(registered.owner == app.connection.uniqueName)
            #expect(registered.path == app.root)
            #expect(registered.adapter == 0)
            #expect(
                registered.services.map(\.uuid) == [
                    "0000180d" + BlueZUUID.baseSuffix, "0000180f" + BlueZUUID.baseSuffix,
                ])
            let heartRate = registered.services[0]
            #expect(heartRate.handle == 0x0010 && heartRate.endHandle == 0x0019)
            #expect(heartRate.characteristics.map(\.handle) == [0x0012, 0x0016, 0x0018])
            #expect(heartRate.characteristics.map(\.cccHandle) == [0x0013, nil, 0x0019])
            #expect(heartRate.characteristics[0].descriptors.map(\.handle) == [0x0014])
            #expect(heartRate.characteristics[0].flags == ["read", "notify"])
            #expect(
                registered.services[1].handle == 0x001A && registered.services[1].characteristics[0].handle == 0x001C)

            // Handle=0 was exported: bluetoothd wrote the allocated handles back before replying.
            let chrc = BlueZInterface.gattCharacteristic1
            #expect(app.handle(at: app.path("service0", "char0"), chrc) == 0x0012)
            #expect(app.handle(at: app.path("service0", "char1"), chrc) == 0x0016)
            #expect(app.handle(at: app.path("service0", "char0", "desc0"), BlueZInterface.gattDescriptor1) == 0x0014)
            #expect(app.handle(at: app.path("service1"), BlueZInterface.gattService1) == 0x001A)
            // Without a Handle property nothing is written.
            #expect(app.handle(at: app.path("service0", "char2"), chrc) == nil)
        }
    }

    @Test("A second application on the same adapter gets the next free handle range")
    func secondApplicationFollows() async throws {
        try await ServerHarness.run { simulator, app, bus in
            try app.export([ServerFixtures.battery])
            try await app.registerApplication()
            let other = try await TestApplication.connect(bus, root: "/org/example/other")
            defer { other.close() }
            try other.export([ServerFixtures.heartRate])
            try await other.registerApplication()
            #expect(simulator.registeredApplications.map { $0.services[0].handle } == [0x0010, 0x0013])
        }
    }

    @Test("A requested service handle is honoured; an overlapping one fails the registration")
    func requestedHandles() async throws {
        try await ServerHarness.run { simulator, app, bus in
            var battery = ServerFixtures.battery
            battery.handle = 0x0100
            try app.export([battery])
            try await app.registerApplication()
            #expect(simulator.registeredApplications.first?.services.first?.handle == 0x0100)
            // bluetoothd does not write back a handle that was already right.
            #expect(app.handle(at: app.path("service1"), BlueZInterface.gattService1) == 0x0100)

            let other = try await TestApplication.connect(bus, root: "/org/example/other")
            defer { other.close() }
            var clash = ServerFixtures.heartRate
            clash.handle = 0x0101
            try other.export([clash])
            let error = await registrationError { () async throws(DBusError) in try await other.registerApplication() }
            #expect(error?.name == BlueZErrorName.failed)
            #expect(error?.message == BlueZErrorMessage.failedToCreateEntryInDatabase)
            #expect(simulator.registeredApplications.count == 1)
        }
    }

    @Test("The same sender and path twice: AlreadyExists; another connection may use the same path")
    func alreadyExists() async throws {
        try await ServerHarness.run { simulator, app, bus in
            try app.export([ServerFixtures.battery])
            try await app.registerApplication()
            let error = await registrationError { () async throws(DBusError) in try await app.registerApplication() }
            #expect(error?.name == BlueZErrorName.alreadyExists)
            #expect(error?.message == BlueZErrorMessage.alreadyExists)

            let other = try await TestApplication.connect(bus)
            defer { other.close() }
            try other.export([ServerFixtures.heartRate])
            try await other.registerApplication()
            #expect(simulator.registeredApplications.count == 2)
        }
    }

    @Test("A registration fault belongs to the next call received, also to one that fails on the way")
    func faultTakenOnArrival() async throws {
        try await ServerHarness.run { simulator, app, _ in
            simulator.inject(SimulatedFault(.registerApplication, action: .noReply))
            // No objects yet: bluetoothd refuses the application after reading them.
            let refused = await registrationError { () async throws(DBusError) in try await app.registerApplication() }
            #expect(refused != nil)
            #expect(simulator.pendingFaults.isEmpty)
            // The fault went with that call: the next registration is answered.
            try app.export([ServerFixtures.battery])
            try await app.registerApplication()
            #expect(simulator.registeredApplications.count == 1)
        }
    }

    @Test("UnregisterApplication: success once, then DoesNotExist; unknown paths DoesNotExist")
    func unregister() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try app.export([ServerFixtures.battery])
            try await app.registerApplication()
            try await app.unregisterApplication()
            #expect(simulator.registeredApplications.isEmpty)
            let again = await registrationError { () async throws(DBusError) in try await app.unregisterApplication() }
            #expect(again?.name == BlueZErrorName.doesNotExist)
            #expect(again?.message == BlueZErrorMessage.doesNotExist)
            let unknown = await registrationError { () async throws(DBusError) in
                try await app.unregisterApplication(try ObjectPath("/nowhere"))
            }
            #expect(unknown?.name == BlueZErrorName.doesNotExist)
            // Unregistered, the path can be registered again.
            try await app.registerApplication()
            #expect(simulator.registeredApplications.count == 1)
        }
    }

    @Test("An application leaving the bus is unregistered, with its advertisements")
    func leavingTheBusUnregisters() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try app.export([ServerFixtures.heartRate])
            try app.exportAdvertisement("advertisement0", ServerFixtures.advertisement)
            try await app.registerApplication()
            try await app.registerAdvertisement("advertisement0")
            #expect(simulator.registeredApplications.count == 1 && simulator.advertisements.count == 1)
            app.close()
            try await eventually { simulator.registeredApplications.isEmpty && simulator.advertisements.isEmpty }
        }
    }

    @Test("InterfacesRemoved for a service object unregisters that service only")
    func serviceRemoved() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try app.export([ServerFixtures.heartRate, ServerFixtures.battery])
            try await app.registerApplication()
            app.connection.unexport(app.path("service1"))
            try await eventually { simulator.registeredApplications.first?.services.count == 1 }
            #expect(simulator.registeredApplications.first?.services.first?.uuid == "0000180d" + BlueZUUID.baseSuffix)
            await #expect(throws: RemoteCentralError.self) { try await simulator.remoteRead(characteristic: "2A19") }
        }
    }

    @Test("A restarted bluetoothd has forgotten every registration")
    func restartForgets() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try app.export([ServerFixtures.battery])
            try await app.registerApplication()
            try await simulator.restartDaemon()
            #expect(simulator.registeredApplications.isEmpty)
            try await app.registerApplication()
            #expect(simulator.registeredApplications.count == 1)
        }
    }
}
