import BLE
import Foundation
import Testing

extension AgainstBluetoothd {
    /// Notifications and indications, sent by the peripheral, received in order.
    @Suite("Notifications and indications")
    struct NotificationTests {
        /// Distinct, numbered values: a loss, a duplicate or a reordering shows.
        static func numbered(_ count: Int) -> [Data] {
            (0..<count).map { index in withUnsafeBytes(of: UInt32(index).littleEndian) { Data($0) } }
        }

        /// Subscribes through `sequence`, has the peripheral send `values` and collects them.
        static func roundTrip(
            _ stage: Stage, _ uuid: BluetoothUUID, _ values: [Data], subscribe: () async throws -> NotificationSequence
        ) async throws -> [Data] {
            let received = try await subscribe()
            let collector = Task {
                var collected: [Data] = []
                for await value in received {
                    collected.append(value)
                    if collected.count == values.count { break }
                }
                return collected
            }
            defer { collector.cancel() }
            try await stage.driver.waitUntilSubscribed(uuid)
            try await stage.driver.send(values, from: uuid)
            return try await within(.seconds(60), "\(values.count) values from \(uuid)") { await collector.value }
        }

        @Test("200 notifications arrive complete and in order")
        func notificationsInOrder() async throws {
            try await Stage.run { stage in
                let (central, peripheral) = try await stage.connected()
                let uuid = TestPeripheralLayout.notifying
                let characteristic = try await stage.characteristic(uuid, of: peripheral)
                let values = Self.numbered(200)
                let received = try await Self.roundTrip(stage, uuid, values) { try await characteristic.subscribe() }
                #expect(received == values)
                try await peripheral.disconnect()
                await central.close()
            }
        }

        @Test("indications arrive complete and in order")
        func indicationsInOrder() async throws {
            try await Stage.run { stage in
                let (central, peripheral) = try await stage.connected()
                let uuid = TestPeripheralLayout.indicating
                let characteristic = try await stage.characteristic(uuid, of: peripheral)
                let values = Self.numbered(20)
                let received = try await Self.roundTrip(stage, uuid, values) { try await characteristic.subscribe() }
                #expect(received == values)
                try await peripheral.disconnect()
                await central.close()
            }
        }

        @Test("notifications over AcquireNotify (fd passing) arrive complete and in order")
        func acquiredNotifications() async throws {
            try await Stage.run { stage in
                let (central, peripheral) = try await stage.connected()
                let uuid = TestPeripheralLayout.notifying
                let characteristic = try await stage.characteristic(uuid, of: peripheral)
                let values = Self.numbered(50)
                let received = try await Self.roundTrip(stage, uuid, values) { characteristic.acquiredNotifications }
                #expect(received == values)
                try await peripheral.disconnect()
                await central.close()
            }
        }
    }
}
