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

        /// Connects, subscribes to `uuid` (through AcquireNotify when `acquired`), has the
        /// peripheral send `count` numbered values and expects exactly them, in order.
        static func expectInOrder(_ uuid: BluetoothUUID, count: Int, acquired: Bool = false) async throws {
            try await Stage.runConnected { stage, peripheral in
                let characteristic = try await stage.characteristic(uuid, of: peripheral)
                let values = numbered(count)
                let received = try await roundTrip(stage, uuid, values) {
                    acquired ? characteristic.acquiredNotifications : try await characteristic.subscribe()
                }
                #expect(received == values)
            }
        }

        @Test("200 notifications arrive complete and in order")
        func notificationsInOrder() async throws {
            try await Self.expectInOrder(TestPeripheralLayout.notifying, count: 200)
        }

        @Test("indications arrive complete and in order")
        func indicationsInOrder() async throws {
            try await Self.expectInOrder(TestPeripheralLayout.indicating, count: 20)
        }

        @Test("notifications over AcquireNotify (fd passing) arrive complete and in order")
        func acquiredNotifications() async throws {
            try await Self.expectInOrder(TestPeripheralLayout.notifying, count: 50, acquired: true)
        }
    }
}
