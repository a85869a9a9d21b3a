import BLESimulator
import BlueZ
import DBus
import Foundation
import Glibc
import Testing

/// A remote central disconnecting (bluetoothd clears an unpaired central's CCC state, as a
/// CCC write of 0 would), and a congested link holding the AcquireNotify sockets.
@Suite("Server: remote central links")
struct RemoteLinkTests {
    private static func registered(_ app: TestApplication) async throws {
        try app.export([ServerFixtures.heartRate, ServerFixtures.acquired])
        try await app.registerApplication()
    }

    @Test("A disconnect drops the central's subscriptions; StopNotify only when it was the last subscriber")
    func disconnectStopsNotify() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            let path = app.path("service0", "char0")
            try await simulator.remoteSubscribe(to: "2A37")
            try await simulator.remoteSubscribe(to: "2A37", central: "AA:BB:CC:DD:EE:01")
            #expect(try await simulator.remoteDisconnect(central: "AA:BB:CC:DD:EE:01") == 1)
            #expect(app.log.calls("StopNotify").isEmpty)
            #expect(
                simulator.registeredApplications.first?.services[0].characteristics[0].subscribedCentrals
                    == [Simulator.defaultRemoteCentral])
            #expect(try await simulator.remoteDisconnect() == 1)
            #expect(app.log.calls("StopNotify", path: path).count == 1)
            // A central without subscriptions changes nothing.
            #expect(try await simulator.remoteDisconnect(central: "AA:BB:CC:DD:EE:02") == 0)
        }
    }

    @Test("A disconnect of the last subscriber hangs up the AcquireNotify socket")
    func disconnectClosesSocket() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            let uuid = ServerFixtures.acquired.characteristics[0].uuid
            let path = app.path("service2", "char0")
            try await simulator.remoteSubscribe(to: uuid)
            let socket = try #require(app.notifySockets.withLock { $0[path] })
            #expect(try await simulator.remoteDisconnect() == 1)
            var byte: UInt8 = 0
            #expect(recv(socket.rawValue, &byte, 1, 0) == 0)
            #expect(app.log.calls("StopNotify").isEmpty)
        }
    }

    @Test("Held notify sockets fill up without losing anything; released, every datagram is delivered in order")
    func holdNotifySockets() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            let uuid = ServerFixtures.acquired.characteristics[0].uuid
            let path = app.path("service2", "char0")
            let stream = simulator.notifications(for: uuid)
            try await simulator.remoteSubscribe(to: uuid, indications: false)
            let socket = try #require(app.notifySockets.withLock { $0[path] })
            simulator.holdNotifySockets(true)
            var sent = 0
            while sent < 10_000 {
                var value = UInt16(sent).bigEndian
                guard send(socket.rawValue, &value, 2, Int32(MSG_DONTWAIT)) == 2 else { break }
                sent += 1
            }
            #expect(sent < 10_000, "the socket never filled")
            #expect(errno == EAGAIN)
            simulator.holdNotifySockets(false)
            var received = 0
            for await notification in stream {
                let bytes = [UInt8](notification.value)
                #expect(Int(UInt16(bytes[0]) << 8 | UInt16(bytes[1])) == received)
                received += 1
                if received == sent { break }
            }
            #expect(received == sent)
        }
    }
}
