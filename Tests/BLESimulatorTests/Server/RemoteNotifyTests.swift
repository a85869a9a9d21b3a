import BLESimulator
import BlueZ
import DBus
import Foundation
import Glibc
import Testing

/// Remote centrals subscribing to an application's characteristics, and the values the
/// application pushes to them (bluez-dbus-api.md §5.4).
@Suite("Server: remote central subscriptions and notifications")
struct RemoteNotifyTests {
    private static func registered(_ app: TestApplication) async throws {
        try app.export([ServerFixtures.heartRate, ServerFixtures.acquired])
        try await app.registerApplication()
    }

    /// The next element of `iterator`, or a failure after `timeout`.
    private static func next(
        _ stream: AsyncStream<ServerNotification>, timeout: Duration = .seconds(20)
    ) async throws -> ServerNotification {
        try await withThrowingTaskGroup(of: ServerNotification?.self) { group in
            group.addTask {
                var iterator = stream.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let notification = first else {
                throw ServerTestError("no notification within \(timeout)")
            }
            return notification
        }
    }

    @Test("StartNotify at every new CCC enable; StopNotify only when the last central disables")
    func startAndStop() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            let path = app.path("service0", "char0")
            try await simulator.remoteSubscribe(to: "2A37")
            try await simulator.remoteSubscribe(to: "2A37", central: "AA:BB:CC:DD:EE:01")
            // The same central enabling again changes nothing.
            try await simulator.remoteSubscribe(to: "2A37")
            #expect(app.log.calls("StartNotify", path: path).count == 2)
            #expect(
                simulator.registeredApplications.first?.services[0].characteristics[0].subscribedCentrals
                    == [Simulator.defaultRemoteCentral, "AA:BB:CC:DD:EE:01"])
            try await simulator.remoteUnsubscribe(from: "2A37")
            #expect(app.log.calls("StopNotify").isEmpty)
            try await simulator.remoteUnsubscribe(from: "2A37", central: "AA:BB:CC:DD:EE:01")
            #expect(app.log.calls("StopNotify", path: path).count == 1)
        }
    }

    @Test("PropertiesChanged(Value) from the app is one notification per subscribed central")
    func notifications() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            let stream = simulator.notifications(for: "2A37")
            let path = app.path("service0", "char0")
            // Nobody subscribed: the value goes nowhere. The simulator takes the application's
            // signals in order, so once a later value of another, subscribed characteristic
            // (the marker) is out, this one was taken before the subscriptions below.
            let marker = simulator.notifications(for: "2A38")
            try await simulator.remoteSubscribe(to: "2A38")
            try app.setValue(Data([0]), at: path)
            try app.setValue(Data([7]), at: app.path("service0", "char2"))
            #expect(try await Self.next(marker).value == Data([7]))
            try await simulator.remoteUnsubscribe(from: "2A38")
            try await simulator.remoteSubscribe(to: "2A37")
            try await simulator.remoteSubscribe(to: "2A37", central: "AA:BB:CC:DD:EE:01")
            try app.setValue(Data([1, 2]), at: path)
            let first = try await Self.next(stream)
            let second = try await Self.next(stream)
            #expect(Set([first.central, second.central]) == ["AA:BB:CC:DD:EE:01", Simulator.defaultRemoteCentral])
            #expect(first.value == Data([1, 2]) && second.value == Data([1, 2]))
            #expect(first.kind == .notification && !first.viaAcquiredSocket)
            #expect(first.characteristic == "00002a37" + BlueZUUID.baseSuffix)
            #expect(first.path == path)
            // Longer values are truncated to 512 bytes.
            try await simulator.remoteUnsubscribe(from: "2A37", central: "AA:BB:CC:DD:EE:01")
            try app.setValue(Data(count: 600), at: path)
            #expect(try await Self.next(stream).value.count == 512)
        }
    }

    @Test("Indications are confirmed by the central: bluetoothd calls Confirm (no reply expected)")
    func indications() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            let stream = simulator.notifications(for: "2A38")
            let path = app.path("service0", "char2")
            try await simulator.remoteSubscribe(to: "2A38")
            try app.setValue(Data([5]), at: path)
            #expect(try await Self.next(stream).kind == .indication)
            let confirm = try #require(try await app.log.wait(for: "Confirm").first)
            #expect(confirm.path == path)
            #expect(confirm.noReplyExpected)
        }
    }

    @Test("A CCC value the flags do not allow: Improperly Configured (0xFD), nothing called")
    func improperlyConfigured() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            let error = await #expect(throws: RemoteCentralError.self) {
                try await simulator.remoteSubscribe(to: "2A37", indications: true)
            }
            #expect(error?.code == .rejected && error?.attError == 0xFD)
            let none = await #expect(throws: RemoteCentralError.self) {
                try await simulator.remoteSubscribe(to: "2A39")
            }
            #expect(none?.attError == 0xFD)
            #expect(app.log.calls("StartNotify").isEmpty)
        }
    }

    @Test("NotifyAcquired: AcquireNotify with the options, datagrams are notifications, the last disable closes")
    func acquireNotify() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            let uuid = ServerFixtures.acquired.characteristics[0].uuid
            let path = app.path("service2", "char0")
            let stream = simulator.notifications(for: uuid)
            try await simulator.remoteSubscribe(to: uuid, indications: true)
            try await simulator.remoteSubscribe(to: uuid, central: "AA:BB:CC:DD:EE:01", indications: false)
            let acquire = try #require(app.log.calls("AcquireNotify", path: path).first)
            #expect(app.log.calls("AcquireNotify").count == 1)
            #expect(app.log.calls("StartNotify").isEmpty)
            #expect(Set(options(of: acquire, at: 0).keys) == ["device", "link", "mtu"])
            let socket = try #require(app.notifySockets.withLock { $0[path] })
            let payload: [UInt8] = [0xCA, 0xFE]
            #expect(send(socket.rawValue, payload, payload.count, 0) == 2)
            let first = try await Self.next(stream)
            let second = try await Self.next(stream)
            #expect(first.viaAcquiredSocket && first.value == Data(payload))
            #expect(Set([first.kind, second.kind]) == [.notification, .indication])
            // The indication's confirmation comes back as one 0x01 byte.
            var confirmation: UInt8 = 0
            #expect(Self.receive(socket, into: &confirmation) == 1 && confirmation == 0x01)
            try await simulator.remoteUnsubscribe(from: uuid)
            try await simulator.remoteUnsubscribe(from: uuid, central: "AA:BB:CC:DD:EE:01")
            // bluetoothd hangs up instead of calling StopNotify.
            #expect(Self.receive(socket, into: &confirmation) == 0)
            #expect(app.log.calls("StopNotify").isEmpty)
        }
    }

    @Test("WriteAcquired: the first write calls AcquireWrite, every write is one datagram")
    func acquireWrite() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            let uuid = ServerFixtures.acquired.characteristics[1].uuid
            let path = app.path("service2", "char1")
            try await simulator.remoteWrite(Data([1, 2, 3]), to: uuid, type: .command)
            try await simulator.remoteWrite(Data([4]), to: uuid, type: .command)
            #expect(app.log.calls("AcquireWrite", path: path).count == 1)
            #expect(app.log.calls("WriteValue").isEmpty)
            let acquire = try #require(app.log.calls("AcquireWrite").first)
            #expect(options(of: acquire, at: 0)["link"] == .string("LE"))
            let socket = try #require(app.writeSockets.withLock { $0[path] })
            var buffer = [UInt8](repeating: 0, count: 16)
            #expect(Self.receive(socket, into: &buffer) == 3 && Array(buffer.prefix(3)) == [1, 2, 3])
            #expect(Self.receive(socket, into: &buffer) == 1 && buffer[0] == 4)
        }
    }

    /// One datagram from `socket`, waiting at most two seconds; -1 on timeout.
    private static func receive(_ socket: FileDescriptor, into byte: inout UInt8) -> Int {
        var buffer = [UInt8](repeating: 0, count: 1)
        let count = receive(socket, into: &buffer)
        if count > 0 { byte = buffer[0] }
        return count
    }

    private static func receive(_ socket: FileDescriptor, into buffer: inout [UInt8]) -> Int {
        var poller = pollfd(fd: socket.rawValue, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 2000) > 0 else { return -1 }
        return recv(socket.rawValue, &buffer, buffer.count, 0)
    }
}
