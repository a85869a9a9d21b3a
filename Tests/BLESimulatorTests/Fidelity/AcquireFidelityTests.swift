import BLESimulator
import BlueZ
import DBus
import Foundation
import Glibc
import Testing

/// `AcquireNotify` and `AcquireWrite`: SEQPACKET sockets instead of D-Bus traffic
/// (bluez-dbus-api.md §4.3, §4.4, Q6, Q11).
@Suite("Fidelity: AcquireNotify and AcquireWrite", .timeLimit(.minutes(1)))
struct AcquireFidelityTests {
    private static let characteristic = BlueZInterface.gattCharacteristic1
    private static let noOptions = DBusValue.dictionary(key: .string, value: .variant, [])

    /// The `(h fd, q mtu)` of an Acquire* reply.
    private static func channel(_ body: [DBusValue]) throws -> (FileDescriptor, UInt16) {
        guard body.count == 2, case .unixFD(let descriptor) = body[0], case .uint16(let mtu) = body[1] else {
            throw DBusError(.typeMismatch, message: "Acquire* answered \(GVariantText.tuple(body))")
        }
        return (descriptor, mtu)
    }

    /// The socket type of `descriptor`.
    private static func socketType(_ descriptor: FileDescriptor) -> Int32 {
        var type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(descriptor.rawValue, SOL_SOCKET, SO_TYPE, &type, &length)
        return type
    }

    /// One datagram already queued on `descriptor`, or nil.
    private static func receive(_ descriptor: FileDescriptor) -> Data? {
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = recv(descriptor.rawValue, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        return count >= 0 ? Data(buffer[0..<count]) : nil
    }

    private static func send(_ descriptor: FileDescriptor, _ data: Data) -> Int {
        data.withUnsafeBytes { Glibc.send(descriptor.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    @Test(
        "AcquireNotify: a SEQPACKET fd and the ATT MTU; notifications arrive as datagrams, Value untouched",
        arguments: Release.allCases)
    func acquireNotify(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            let mark = client.transcript.mark
            let (descriptor, mtu) = try Self.channel(
                try await client.call(Paths.measurement, Self.characteristic, "AcquireNotify", [Self.noOptions]))
            #expect(mtu == 247)
            #expect(Self.socketType(descriptor) == Int32(SOCK_SEQPACKET.rawValue))
            #expect(
                client.transcript.lines(since: mark, kinds: [.signal])
                    == [Trace.changed(Paths.measurement, Self.characteristic, "'NotifyAcquired': <true>")])
            let before = client.transcript.mark
            for byte: UInt8 in [1, 2, 2] {
                try simulator.notify(
                    address: Peripherals.sensorAddress, characteristic: UUIDs.measurement, value: Data([0, byte]))
            }
            #expect(Self.receive(descriptor) == Data([0, 1]))
            #expect(Self.receive(descriptor) == Data([0, 2]))
            #expect(Self.receive(descriptor) == Data([0, 2]))
            #expect(Self.receive(descriptor) == nil)
            // Value is not updated and nothing is announced for fd notifications.
            #expect(!client.transcript.since(before).contains { $0.kind == .signal })
            #expect(try await client.get(Paths.measurement, Self.characteristic, "Value") == .bytes(Data()))
            // While acquired: StartNotify and a second AcquireNotify are NotPermitted.
            expectError(
                await client.error(Paths.measurement, Self.characteristic, "StartNotify"), BlueZErrorName.notPermitted,
                BlueZErrorMessage.notifyAcquired)
            expectError(
                await client.error(Paths.measurement, Self.characteristic, "AcquireNotify", [Self.noOptions]),
                BlueZErrorName.notPermitted, BlueZErrorMessage.notifyAcquired)
            // Closing the fd releases it.
            let release = client.transcript.mark
            descriptor.close()
            try await client.transcript.first("NotifyAcquired=false", since: release) {
                $0.isPropertiesChanged(Paths.measurement, Self.characteristic)
                    && $0.changedProperties["NotifyAcquired"] == .boolean(false)
            }
        }
    }

    @Test("StopNotify closes an acquired notify fd", arguments: Release.allCases)
    func stopNotifyReleases(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            let (descriptor, _) = try Self.channel(
                try await client.call(Paths.measurement, Self.characteristic, "AcquireNotify", [Self.noOptions]))
            let mark = client.transcript.mark
            try await client.call(Paths.measurement, Self.characteristic, "StopNotify")
            #expect(
                client.transcript.lines(since: mark, kinds: [.reply, .signal]) == [
                    Trace.changed(Paths.measurement, Self.characteristic, "'NotifyAcquired': <false>"),
                    Trace.reply("StopNotify"),
                ])
            // The peer end is shut: reading gives end-of-file.
            var byte: UInt8 = 0
            #expect(recv(descriptor.rawValue, &byte, 1, Int32(MSG_DONTWAIT)) == 0)
        }
    }

    @Test("AcquireNotify while any StartNotify session exists is InProgress", arguments: Release.allCases)
    func acquireNotifyInProgress(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, bus in
            try await client.connectSensor()
            let other = try await RecordingClient.connect(to: bus)
            defer { other.close() }
            try await other.call(Paths.measurement, Self.characteristic, "StartNotify")
            let error = await client.error(Paths.measurement, Self.characteristic, "AcquireNotify", [Self.noOptions])
            expectError(error, BlueZErrorName.inProgress, BlueZErrorMessage.inProgress)
        }
    }

    @Test(
        "AcquireNotify needs notify on 5.66; 5.87 also takes indicate-only (NotifyAcquired stays absent)",
        arguments: Release.allCases)
    func acquireNotifyIndicate(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            let result = await client.result(Paths.indicate, Self.characteristic, "AcquireNotify", [Self.noOptions])
            switch (release, result) {
            case (.bluez566, .failure(let error)):
                expectError(error, BlueZErrorName.notSupported, BlueZErrorMessage.notSupported)
            case (.bluez587, .success(let body)):
                let (_, mtu) = try Self.channel(body)
                #expect(mtu == 247)
                let error = await client.error(
                    Paths.indicate, .properties, "Get",
                    [.string(Self.characteristic.rawValue), .string("NotifyAcquired")])
                expectError(error, DBusError.StandardName.invalidArgs, "No such property 'NotifyAcquired'")
            default:
                Issue.record("unexpected AcquireNotify outcome \(result)")
            }
            // Without notify or indicate: NotSupported everywhere.
            expectError(
                await client.error(Paths.location, Self.characteristic, "AcquireNotify", [Self.noOptions]),
                BlueZErrorName.notSupported, BlueZErrorMessage.notSupported)
        }
    }

    @Test(
        "AcquireWrite: datagrams become writes; WriteAcquired toggles; WriteValue meanwhile is NotPermitted",
        arguments: Release.allCases)
    func acquireWrite(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            let mark = client.transcript.mark
            let (descriptor, mtu) = try Self.channel(
                try await client.call(Paths.data, Self.characteristic, "AcquireWrite", [Self.noOptions]))
            #expect(mtu == 247)
            #expect(Self.socketType(descriptor) == Int32(SOCK_SEQPACKET.rawValue))
            #expect(
                client.transcript.lines(since: mark, kinds: [.signal])
                    == [Trace.changed(Paths.data, Self.characteristic, "'WriteAcquired': <true>")])
            expectError(
                await client.error(Paths.data, Self.characteristic, "WriteValue", [.bytes(Data([1])), Self.noOptions]),
                BlueZErrorName.notPermitted, BlueZErrorMessage.writeAcquired)
            expectError(
                await client.error(Paths.data, Self.characteristic, "AcquireWrite", [Self.noOptions]),
                BlueZErrorName.notPermitted, BlueZErrorMessage.writeAcquired)
            #expect(Self.send(descriptor, Data("first".utf8)) == 5)
            #expect(Self.send(descriptor, Data("second".utf8)) == 6)
            // Closing releases it; every datagram was delivered before the hang-up.
            let release = client.transcript.mark
            descriptor.close()
            try await client.transcript.first("WriteAcquired=false", since: release) {
                $0.isPropertiesChanged(Paths.data, Self.characteristic)
                    && $0.changedProperties["WriteAcquired"] == .boolean(false)
            }
            #expect(
                try simulator.value(address: Peripherals.sensorAddress, characteristic: UUIDs.data)
                    == Data("second".utf8))
            // Writes work again.
            #expect(
                await client.error(Paths.data, Self.characteristic, "WriteValue", [.bytes(Data([1])), Self.noOptions])
                    == nil)
            // Without write-without-response: NotSupported.
            expectError(
                await client.error(Paths.controlPoint, Self.characteristic, "AcquireWrite", [Self.noOptions]),
                BlueZErrorName.notSupported, BlueZErrorMessage.notSupported)
        }
    }

    @Test("Link loss hangs up acquired fds and releases them", arguments: Release.allCases)
    func linkLossHangsUp(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            let (notify, _) = try Self.channel(
                try await client.call(Paths.measurement, Self.characteristic, "AcquireNotify", [Self.noOptions]))
            let (write, _) = try Self.channel(
                try await client.call(Paths.data, Self.characteristic, "AcquireWrite", [Self.noOptions]))
            let mark = client.transcript.mark
            try simulator.dropLink(address: Peripherals.sensorAddress)
            try await client.waitForDisconnected(since: mark)
            var byte: UInt8 = 0
            #expect(recv(notify.rawValue, &byte, 1, Int32(MSG_DONTWAIT)) == 0)
            #expect(Self.send(write, Data([1])) < 0)
            let released = client.transcript.since(mark).flatMap { $0.changedProperties.keys }
            #expect(released.contains("NotifyAcquired"))
            #expect(released.contains("WriteAcquired"))
        }
    }
}
