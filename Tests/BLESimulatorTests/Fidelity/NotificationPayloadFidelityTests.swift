import BLESimulator
import BlueZ
import DBus
import Foundation
import Glibc
import Testing

/// What a notification or indication carries and how it is acknowledged: at most ATT MTU − 3
/// bytes (Core Vol 3 Part F 3.4.7; bluez-dbus-api.md §4.4, §4.6), indications confirmed by
/// bluetoothd, notifications not.
@Suite("Fidelity: notification payloads and indications", .timeLimit(.minutes(1)))
struct NotificationPayloadFidelityTests {
    private static let characteristic = BlueZInterface.gattCharacteristic1

    /// The sensor with an ATT MTU of 23: 20 bytes per notification.
    private static func smallMTUSensor() -> VirtualPeripheral {
        var sensor = Peripherals.sensor()
        sensor.mtu = 23
        return sensor
    }

    @Test("A notification longer than MTU − 3 reaches the client cut to MTU − 3 bytes", arguments: Release.allCases)
    func notificationCutToMTU(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Self.smallMTUSensor()]) { simulator, client, _ in
            try await client.connectSensor()
            try await client.call(Paths.data, Self.characteristic, "StartNotify")
            let long = Data((0..<30).map { UInt8($0) })
            let mark = client.transcript.mark
            try simulator.notify(address: Peripherals.sensorAddress, characteristic: UUIDs.data, value: long)
            let change = try await client.transcript.first("notification", since: mark) {
                $0.isPropertiesChanged(Paths.data, Self.characteristic) && $0.changedProperties["Value"] != nil
            }
            #expect(change.changedProperties["Value"] == .bytes(long.prefix(20)))
            // The peripheral still holds the whole value: a (long) read returns it.
            let read = try await client.call(
                Paths.data, Self.characteristic, "ReadValue", [.dictionary(key: .string, value: .variant, [])])
            #expect(read == [.bytes(long)])
        }
    }

    @Test("An AcquireNotify datagram is cut to MTU − 3 bytes too", arguments: Release.allCases)
    func acquiredNotificationCutToMTU(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Self.smallMTUSensor()]) { simulator, client, _ in
            try await client.connectSensor()
            let body = try await client.call(
                Paths.measurement, Self.characteristic, "AcquireNotify",
                [.dictionary(key: .string, value: .variant, [])])
            guard case .unixFD(let descriptor)? = body.first, body.count == 2, body[1] == .uint16(23) else {
                Issue.record("AcquireNotify answered \(body)")
                return
            }
            defer { descriptor.close() }
            let long = Data(repeating: 0xab, count: 40)
            #expect(
                try simulator.notify(address: Peripherals.sensorAddress, characteristic: UUIDs.measurement, value: long)
                    == 1)
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = recv(descriptor.rawValue, &buffer, buffer.count, 0)
            #expect(count == 20)
        }
    }

    @Test(
        "Indications (indicate without notify) are confirmed and counted; notifications are not",
        arguments: Release.allCases)
    func indicationsConfirmed(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            try await client.call(Paths.indicate, Self.characteristic, "StartNotify")
            try await client.call(Paths.data, Self.characteristic, "StartNotify")
            // The CCC holds 0x0002 (indications) for the indicate-only one, 0x0001 otherwise.
            let noOptions = DBusValue.dictionary(key: .string, value: .variant, [])
            let indicateCCC = try await client.call(
                Paths.indicateCCC, BlueZInterface.gattDescriptor1, "ReadValue", [noOptions])
            #expect(indicateCCC == [.bytes(Data([0x02, 0x00]))])
            let dataCCC = try await client.call(Paths.dataCCC, BlueZInterface.gattDescriptor1, "ReadValue", [noOptions])
            #expect(dataCCC == [.bytes(Data([0x01, 0x00]))])
            let before = simulator.statistics
            for byte: UInt8 in 1...3 {
                try simulator.notify(address: Peripherals.sensorAddress, characteristic: UUIDs.indicate, value: [byte])
            }
            try simulator.notify(address: Peripherals.sensorAddress, characteristic: UUIDs.data, value: [9])
            let after = simulator.statistics
            #expect(after.notificationsSent - before.notificationsSent == 4)
            #expect(after.indicationsConfirmed - before.indicationsConfirmed == 3)
        }
    }
}

extension Simulator {
    /// ``notify(address:characteristic:value:)`` with the bytes as an array literal.
    @discardableResult
    fileprivate func notify(address: String, characteristic: String, value: [UInt8]) throws -> Int {
        try notify(address: address, characteristic: characteristic, value: Data(value))
    }
}
