import BLESimulator
import BlueZ
import DBus
import DBusTestSupport
import Foundation
import Glibc
import Testing

/// Two adapters of one simulator in range of each other, as two controllers under real
/// bluetoothd: what an application registers on hci1 is a peripheral hci0 discovers, connects
/// to and talks GATT with, its requests reaching the application.
@Suite("Server: registrations on one adapter are a peripheral to the others")
struct AdapterBridgeTests {
    static let centralAddress = "00:AA:01:00:00:00"
    static let peripheralAddress = "00:AA:01:01:00:01"
    static let peripheralAdapter: ObjectPath = (try? BlueZPath.adapter(index: 1)) ?? .root
    /// hci0's device object for hci1.
    static let device: ObjectPath =
        (try? BlueZPath.device(address: peripheralAddress, adapter: Paths.adapter)) ?? .root

    /// A simulator with two adapters, the heart-rate and battery application registered and
    /// advertised on hci1, and a recording client (the central) on the same bus.
    static func run(_ body: (Simulator, TestApplication, RecordingClient) async throws -> Void) async throws {
        var options = SimulatorOptions()
        options.adapters = [centralAddress, peripheralAddress]
        try await Fidelity.run(.bluez566, options: options) { simulator, client, bus in
            let app = try await TestApplication.connect(bus, adapter: peripheralAdapter)
            defer { app.close() }
            try app.export([ServerFixtures.heartRate, ServerFixtures.battery, ServerFixtures.acquired])
            try app.exportAdvertisement("advertisement0", ServerFixtures.advertisement)
            try await app.registerApplication()
            try await app.registerAdvertisement("advertisement0")
            try await body(simulator, app, client)
        }
    }

    /// Discovers hci1 from hci0, connects, and waits for the services.
    static func connect(_ client: RecordingClient) async throws {
        let mark = client.transcript.mark
        try await client.startDiscovery()
        try await client.waitForDevice(device, since: mark)
        try await client.stopDiscovery()
        try await client.connectAndResolve(device)
    }

    /// The path of hci0's characteristic object with `uuid` (16-bit form).
    static func characteristic(_ client: RecordingClient, _ uuid: String) async throws -> ObjectPath {
        let objects = try await client.managedObjects()
        let wanted = try #require(BlueZUUID.canonical(uuid))
        let found = objects.paths(under: device).first { path in
            objects.properties(path, BlueZInterface.gattCharacteristic1)?["UUID"] == .string(wanted)
        }
        return try #require(found, "no characteristic \(uuid) under \(device)")
    }

    @Test("discovery on hci0 finds hci1's advertisement; hci1 does not hear itself")
    func discovery() async throws {
        try await Self.run { simulator, _, client in
            let own = try BlueZPath.device(address: Self.peripheralAddress, adapter: Self.peripheralAdapter)
            try await client.call(Self.peripheralAdapter, BlueZInterface.adapter1, "StartDiscovery")
            let mark = client.transcript.mark
            try await client.startDiscovery()
            let added = try await client.waitForDevice(Self.device, since: mark)
            let properties = try #require(added.addedProperties(of: BlueZInterface.device1))
            #expect(properties["Name"] == .string("swift-ble"))
            #expect(properties["UUIDs"] == .array(.string, [.string(try #require(BlueZUUID.canonical("180D")))]))
            #expect(properties["ManufacturerData"] != nil)
            try await client.stopDiscovery()
            #expect(try await client.managedObjects().objects[own] == nil)
            // The bridge is the adapter's, not a peripheral the world was given.
            #expect(simulator.peripherals.isEmpty)
        }
    }

    @Test("reads and writes from hci0 reach the application on hci1, naming hci0 as the central")
    func readsAndWrites() async throws {
        try await Self.run { _, app, client in
            try await Self.connect(client)
            let central = try BlueZPath.device(address: Self.centralAddress, adapter: Self.peripheralAdapter)
            let rate = try await Self.characteristic(client, "2A37")
            let read = try await client.call(rate, BlueZInterface.gattCharacteristic1, "ReadValue", [Self.noOptions])
            #expect(read == [.bytes(Data([0x2A]))])
            let readCall = try #require(app.log.calls("ReadValue", path: app.path("service0", "char0")).first)
            #expect(Self.option("device", of: readCall) == .objectPath(central))

            let control = try await Self.characteristic(client, "2A39")
            try await client.call(
                control, BlueZInterface.gattCharacteristic1, "WriteValue", [.bytes(Data([1, 2])), Self.noOptions])
            let write = try #require(app.log.calls("WriteValue", path: app.path("service0", "char1")).first)
            #expect(write.body.first == .bytes(Data([1, 2])))

            let level = try await Self.characteristic(client, "2A19")
            for byte in UInt8(0)..<5 {
                try await client.call(
                    level, BlueZInterface.gattCharacteristic1, "WriteValue", [.bytes(Data([byte])), Self.noOptions])
            }
            let commands = try await app.log.wait(for: "WriteValue", count: 5, path: app.path("service1", "char0"))
            #expect(commands.map { $0.body.first } == (0..<5).map { .bytes(Data([$0])) })
        }
    }

    @Test("StartNotify subscribes at the application; its values reach hci0 in order; disconnect unsubscribes")
    func notifications() async throws {
        try await Self.run { _, app, client in
            try await Self.connect(client)
            let (rate, appRate, _) = try await Self.enable(
                "StartNotify", "2A37", app.path("service0", "char0"), client, app)
            let mark = client.transcript.mark
            for byte in UInt8(1)...10 { try app.setValue(Data([byte]), at: appRate) }
            let values = try await client.transcript.count(10, "10 notifications", since: mark) {
                $0.isPropertiesChanged(rate, BlueZInterface.gattCharacteristic1) && $0.changedProperties["Value"] != nil
            }
            #expect(values.map { $0.changedProperties["Value"] } == (1...10).map { .bytes(Data([$0])) })

            let (indicated, appIndicated, _) = try await Self.enable(
                "StartNotify", "2A38", app.path("service0", "char2"), client, app)
            try app.setValue(Data([0x77]), at: appIndicated)
            try await client.transcript.first("an indication", since: mark) {
                $0.isPropertiesChanged(indicated, BlueZInterface.gattCharacteristic1)
                    && $0.changedProperties["Value"] == .bytes(Data([0x77]))
            }
            try await app.log.wait(for: "Confirm", path: appIndicated)

            try await client.call(Self.device, BlueZInterface.device1, "Disconnect")
            try await app.log.wait(for: "StopNotify", path: appRate)
            try await app.log.wait(for: "StopNotify", path: appIndicated)
        }
    }

    @Test("AcquireNotify and AcquireWrite on hci0 carry the application's notify and write channels")
    func acquiredChannels() async throws {
        try await Self.run { _, app, client in
            try await Self.connect(client)
            // The CCC write reaches the application before the channel is granted.
            let (_, appNotifying, reply) = try await Self.enable(
                "AcquireNotify", "12345678-1234-5678-1234-56789abcdef1", app.path("service2", "char0"), client, app,
                [Self.noOptions])
            guard case .unixFD(let channel)? = reply.first else { throw ServerTestError("AcquireNotify: \(reply)") }
            let appSocket = try #require(app.notifySockets.withLock { $0[appNotifying] })
            for byte in UInt8(1)...5 { Self.send(byte, to: appSocket) }
            #expect(try (1...5).map { _ in try Self.receive(channel) } == (1...5).map { Data([UInt8($0)]) })
            channel.close()

            let writing = try await Self.characteristic(client, "12345678-1234-5678-1234-56789abcdef2")
            let written = try await client.call(
                writing, BlueZInterface.gattCharacteristic1, "AcquireWrite", [Self.noOptions])
            guard case .unixFD(let writer)? = written.first else { throw ServerTestError("AcquireWrite: \(written)") }
            defer { writer.close() }
            for byte in UInt8(1)...3 { Self.send(byte, to: writer) }
            // The application gets the commands on its own AcquireWrite channel, in order.
            try await app.log.wait(for: "AcquireWrite", path: app.path("service2", "char1"))
            let appWriter = try #require(app.writeSockets.withLock { $0[app.path("service2", "char1")] })
            #expect(try (1...3).map { _ in try Self.receive(appWriter) } == (1...3).map { Data([UInt8($0)]) })
        }
    }

    /// Calls `member` on hci0's characteristic `uuid` and waits until the application's
    /// `application` characteristic got the call it makes bluetoothd make.
    private static func enable(
        _ member: String, _ uuid: String, _ application: ObjectPath, _ client: RecordingClient, _ app: TestApplication,
        _ arguments: [DBusValue] = []
    ) async throws -> (ObjectPath, ObjectPath, [DBusValue]) {
        let path = try await characteristic(client, uuid)
        let reply = try await client.call(path, BlueZInterface.gattCharacteristic1, member, arguments)
        try await app.log.wait(for: member, path: application)
        return (path, application, reply)
    }

    /// A one-byte datagram.
    private static func send(_ byte: UInt8, to socket: FileDescriptor) {
        _ = Data([byte]).withUnsafeBytes { Glibc.send(socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// One datagram from `socket`, waiting at most ten seconds.
    private static func receive(_ socket: FileDescriptor) throws -> Data {
        var poller = pollfd(fd: socket.rawValue, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 10_000) > 0 else { throw ServerTestError("no datagram within 10 s") }
        var buffer = [UInt8](repeating: 0, count: 600)
        let count = recv(socket.rawValue, &buffer, buffer.count, 0)
        guard count >= 0 else { throw ServerTestError("recv failed: \(errno)") }
        return Data(buffer[0..<count])
    }

    @Test("an application error reaches the central as the ATT error it stands for")
    func applicationError() async throws {
        try await Self.run { _, app, client in
            try await Self.connect(client)
            app.react(
                BlueZMethod.readValue, at: app.path("service0", "char0"),
                .error("org.bluez.Error.NotPermitted", "Read not permitted"))
            let rate = try await Self.characteristic(client, "2A37")
            let error = await client.error(rate, BlueZInterface.gattCharacteristic1, "ReadValue", [Self.noOptions])
            #expect(error?.name == "org.bluez.Error.NotPermitted")
        }
    }

    @Test("unregistering the advertisement stops hci0 from finding hci1")
    func unregistered() async throws {
        try await Self.run { _, app, client in
            try await app.unregisterAdvertisement("advertisement0")
            try await client.startDiscovery()
            // Long enough for many advertising events of a 100 ms interval.
            try await Task.sleep(for: .milliseconds(500))
            try await client.stopDiscovery()
            #expect(try await client.managedObjects().objects[Self.device] == nil)
        }
    }

    private static let noOptions = DBusValue.dictionary(key: .string, value: .variant, [])

    /// One entry of the options dict of a call into the application.
    private static func option(_ key: String, of call: DBusMessage) -> DBusValue? {
        guard case .dictionary(_, _, let entries)? = call.body.last else { return nil }
        return entries.first { $0.key == .string(key) }?.value.unwrappingVariant
    }
}
