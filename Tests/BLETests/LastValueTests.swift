import BLE
import Foundation
import Testing

/// `Characteristic.lastValue`: the newest value read or notified, as Core Bluetooth's `value`.
@Suite("Last value", .timeLimit(.minutes(1)))
struct LastValueTests {
    @Test("a read and a notification set it, in order; a write and a descriptor read do not; it outlives the link")
    func readsAndNotificationsSetIt() async throws {
        try await NotificationTests.run { fixture, _, peripheral in
            let rate = try await NotificationTests.rate(peripheral)
            #expect(rate.lastValue == nil, "nothing read or notified yet")
            #expect(try await rate.read() == Data([0xEE]))
            #expect(rate.lastValue == Data([0xEE]))

            var values = try await rate.subscribe().makeAsyncIterator()
            try NotificationTests.notify(fixture, Data([1, 2]))
            #expect(await values.next() == Data([1, 2]))
            #expect(rate.lastValue == Data([1, 2]))
            #expect(try await rate.read() == Data([1, 2]), "the simulator keeps the notified value")
            try NotificationTests.notify(fixture, Data([3]))
            #expect(await values.next() == Data([3]))
            #expect(rate.lastValue == Data([3]), "the read's echo did not overwrite the newer notification")

            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            try await control.write(Data([5]))
            #expect(control.lastValue == nil, "a write is not a value seen")
            let label = try #require(control.descriptors.first { $0.uuid == BluetoothUUID("2901") })
            #expect(try await control.read(label) == Data("Control".utf8))
            #expect(control.lastValue == nil, "a descriptor's value is not the characteristic's")
            #expect(try await control.read() == Data([5]))
            #expect(control.lastValue == Data([5]))

            try await peripheral.disconnect()
            #expect(rate.lastValue == Data([3]))
            #expect(control.lastValue == Data([5]))
        }
    }
}
