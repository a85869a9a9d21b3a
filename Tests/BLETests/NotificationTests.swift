import BLE
import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// `Characteristic.notifications` and `subscribe()`: fan-out, StartNotify/StopNotify
/// refcounting, read echoes, empty values, buffering.
@Suite("Notifications", .timeLimit(.minutes(1)))
struct NotificationTests {
    static let sensor = TestPeripherals.sensorAddress

    static func run(
        options: CentralOptions = CentralOptions(),
        _ body: @escaping (SimulatorFixture, Central, Peripheral) async throws -> Void
    ) async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            let (central, peripheral) = try await fixture.connected(Self.sensor, options: options)
            try await body(fixture, central, peripheral)
            await central.close()
        }
    }

    static func notify(_ fixture: SimulatorFixture, _ value: Data, uuid: String = "2A37") throws {
        try fixture.simulator.notify(address: sensor, characteristic: uuid, value: value)
    }

    static func rate(_ peripheral: Peripheral) async throws -> Characteristic {
        try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
    }

    @Test("two subscribers both get every value, in order, empty ones included")
    func twoSubscribers() async throws {
        try await Self.run { fixture, _, peripheral in
            let rate = try await Self.rate(peripheral)
            let first = try await rate.subscribe()
            let second = try await rate.subscribe()
            let sent = (UInt8(1)...20).map { Data([$0]) } + [Data(), Data([0xFF])]
            for value in sent { try Self.notify(fixture, value) }
            #expect(try await collect(first, count: sent.count) == sent)
            #expect(try await collect(second, count: sent.count) == sent)
        }
    }

    /// Values are routed by the path of the characteristic that sent them, the last route
    /// taken again while the same characteristic goes on: interleaved characteristics and
    /// peripherals, and a peripheral connected anew (its values' new destination), each
    /// reach exactly their own subscribers.
    @Test("interleaved characteristics and peripherals each reach only their own subscribers, in order")
    func interleavedRoutes() async throws {
        let second = "D1:00:00:00:00:02"
        try await SimulatorFixture.run(peripherals: [
            TestPeripherals.sensor(), TestPeripherals.sensor(address: second),
        ]) { fixture in
            let (central, first) = try await fixture.connected(Self.sensor)
            let other = try await central.connect(try PeripheralID(address: second), timeout: .seconds(10))
            func subscribe(_ peripheral: Peripheral, _ uuid: String, _ service: String) async throws
                -> NotificationSequence
            {
                try await peripheral.characteristic(BluetoothUUID(uuid), in: BluetoothUUID(service)).subscribe()
            }
            let streams = [
                (Self.sensor, "2A37", try await subscribe(first, "2A37", "180D")),
                (Self.sensor, "2A19", try await subscribe(first, "2A19", "180F")),
                (second, "2A37", try await subscribe(other, "2A37", "180D")),
                (second, "2A19", try await subscribe(other, "2A19", "180F")),
            ]
            // Runs of one characteristic, then switches, in an order that visits every pair.
            let order = [0, 0, 1, 2, 2, 2, 3, 0, 3, 1, 1, 2, 0, 3]
            var expected: [[Data]] = Array(repeating: [], count: streams.count)
            for (step, index) in order.enumerated() {
                let value = Data([UInt8(index), UInt8(step)])
                expected[index].append(value)
                try fixture.simulator.notify(address: streams[index].0, characteristic: streams[index].1, value: value)
            }
            for (index, stream) in streams.enumerated() {
                #expect(try await collect(stream.2, count: expected[index].count) == expected[index], "\(index)")
            }
            // The first peripheral again, connected anew: its values go to the new
            // subscription, and the other peripheral's still to its own.
            try await first.disconnect()
            let again = try await central.connect(try PeripheralID(address: Self.sensor), timeout: .seconds(10))
            let renewed = try await subscribe(again, "2A37", "180D")
            // (An iteration that ended unsubscribed: the other peripheral's is made anew too.)
            let otherRenewed = try await subscribe(other, "2A37", "180D")
            for step in 0..<3 {
                try fixture.simulator.notify(
                    address: Self.sensor, characteristic: "2A37", value: Data([9, UInt8(step)]))
                try fixture.simulator.notify(address: second, characteristic: "2A37", value: Data([8, UInt8(step)]))
            }
            #expect(try await collect(renewed, count: 3) == (0..<3).map { Data([9, UInt8($0)]) })
            #expect(try await collect(otherRenewed, count: 3) == (0..<3).map { Data([8, UInt8($0)]) })
            await central.close()
        }
    }

    @Test("the notifications property: iterating subscribes")
    func iteratingSubscribes() async throws {
        try await Self.run { fixture, _, peripheral in
            let rate = try await Self.rate(peripheral)
            let received = PosixMutex<[Data]>([])
            let listener = Task {
                for await value in rate.notifications {
                    received.withLock { $0.append(value) }
                    if value == Data([0xFF]) { return }
                }
            }
            // Notifications flow once StartNotify is through; send until one arrives.
            try await eventually("the subscription is active") {
                try Self.notify(fixture, Data([0x01]))
                return !received.withLock { $0 }.isEmpty
            }
            try Self.notify(fixture, Data([0xFF]))
            await listener.value
            #expect(received.withLock { $0 }.allSatisfy { $0 == Data([0x01]) || $0 == Data([0xFF]) })
            #expect(received.withLock { $0 }.last == Data([0xFF]))
        }
    }

    @Test("isNotifying: on once BlueZ confirmed, off when the last iteration leaves or the link goes")
    func isNotifyingFollowsTheSubscription() async throws {
        let recorder = LogRecorder()
        try await Self.run(options: tracing(recorder)) { fixture, central, peripheral in
            let rate = try await Self.rate(peripheral)
            #expect(await !rate.isNotifying)
            var iterator: NotificationSequence.AsyncIterator? = try await rate.subscribe().makeAsyncIterator()
            #expect(await rate.isNotifying, "subscribe() returns once BlueZ confirmed")
            try Self.notify(fixture, Data([1]))
            #expect(await iterator?.next() == Data([1]))
            iterator = nil
            try await recorder.waitFor("StopNotify -> ", suffix: true)
            #expect(await !rate.isNotifying)

            let held = try await rate.subscribe()
            #expect(await rate.isNotifying)
            try await peripheral.disconnect()
            #expect(await !rate.isNotifying, "no link, no notifications")
            _ = held
        }
    }

    @Test("one StartNotify for all subscribers; the last one leaving sends StopNotify")
    func lastLeavingStops() async throws {
        let recorder = LogRecorder()
        try await Self.run(options: tracing(recorder)) { fixture, _, peripheral in
            let probe = try await BusProbe.open(fixture)
            let rate = try await Self.rate(peripheral)
            let path = try #require(
                try await Self.characteristicPath(probe, uuid: "00002a37-0000-1000-8000-00805f9b34fb"))
            let notifying = { try await probe.property(path, "org.bluez.GattCharacteristic1", "Notifying") }

            var second: NotificationSequence.AsyncIterator? = try await rate.subscribe().makeAsyncIterator()
            do {
                var first = try await rate.subscribe().makeAsyncIterator()
                #expect(try await notifying() == .boolean(true))
                try Self.notify(fixture, Data([1]))
                #expect(await first.next() == Data([1]))
            }
            // The first iteration is gone; the second still receives and Notifying stays on.
            #expect(await second?.next() == Data([1]))
            try Self.notify(fixture, Data([2]))
            #expect(await second?.next() == Data([2]))
            #expect(try await notifying() == .boolean(true))

            second = nil
            try await recorder.waitFor("StopNotify -> ", suffix: true)
            #expect(recorder.count("GattCharacteristic1.StartNotify") == 1, "one StartNotify for both")
            #expect(recorder.count("GattCharacteristic1.StopNotify") == 1, "one StopNotify, by the last")
            #expect(try await notifying() == .boolean(false))
            #expect(try fixture.simulator.notify(address: Self.sensor, characteristic: "2A37", value: Data([9])) == 0)
            probe.close()
        }
    }

    @Test("a subscription not iterated is released with its sequence")
    func unusedSubscriptionReleased() async throws {
        let recorder = LogRecorder()
        try await Self.run(options: tracing(recorder)) { _, _, peripheral in
            let rate = try await Self.rate(peripheral)
            _ = try await rate.subscribe()
            try await recorder.waitFor("StopNotify -> ", suffix: true)
        }
    }

    @Test(
        "a characteristic's changes reach the central only while it is subscribed; its rule goes with the last subscriber"
    )
    func characteristicRuleFollowsSubscription() async throws {
        try await Self.run { fixture, central, peripheral in
            let probe = try await BusProbe.open(fixture)
            defer { probe.close() }
            let name = try #require(central.diagnostics.connectionName)
            let rate = try await Self.rate(peripheral)
            let rules = try await matchRules(of: name, probe)

            // The connect's targeted scan stops after its Connect was answered: its last signals
            // (Discovering false, the device's RSSI invalidated) may still be on their way. Once
            // bluetoothd says it stopped discovering, a read's reply, sent after them, proves
            // they arrived.
            try await eventually("bluetoothd stopped discovering") {
                try await probe.property(SimPath.adapter, "org.bluez.Adapter1", "Discovering") == .boolean(false)
            }
            #expect(try await rate.read() == Data([0xEE]))

            // Unsubscribed: bluetoothd echoes every read, and none of the echoes is delivered.
            let before = central.diagnostics.busSignalsReceived
            for _ in 0..<20 { #expect(try await rate.read() == Data([0xEE])) }
            #expect(central.diagnostics.busSignalsReceived == before, "read echoes reached the central")

            // Subscribed: one more rule, and the characteristic's signals arrive (Notifying,
            // each value); the echoes of reads are filtered out of the notifications.
            var values: NotificationSequence.AsyncIterator? = try await rate.subscribe().makeAsyncIterator()
            #expect(try await matchRules(of: name, probe) == rules + 1)
            let subscribed = central.diagnostics.busSignalsReceived
            #expect(try await rate.read() == Data([0xEE]))
            try Self.notify(fixture, Data([0x42]))
            #expect(await values?.next() == Data([0x42]))
            #expect(central.diagnostics.busSignalsReceived >= subscribed + 2, "the read echo and the notification")

            values = nil
            try await eventually("the characteristic's rule is removed") {
                try await matchRules(of: name, probe) == rules
            }
            let unsubscribed = central.diagnostics.busSignalsReceived
            for _ in 0..<5 { _ = try await rate.read() }
            #expect(central.diagnostics.busSignalsReceived == unsubscribed)
        }
    }

    @Test("reads of a subscribed characteristic are not delivered as notifications")
    func readEchoNotDelivered() async throws {
        try await Self.run { fixture, _, peripheral in
            let rate = try await Self.rate(peripheral)
            let values = try await rate.subscribe()
            let reader = Task {
                var reads: [Data] = []
                for _ in 0..<30 { reads.append(try await rate.read()) }
                return reads
            }
            let sent = (UInt8(1)...30).map { Data([$0]) }
            for value in sent {
                try Self.notify(fixture, value)
                await Task.yield()
            }
            let reads = try await reader.value
            // A marker after all reads: nothing but the notified values may come before it.
            try Self.notify(fixture, Data([0xFF]))
            let received = try await collect(values, count: sent.count + 1)
            #expect(received == sent + [Data([0xFF])], "\(received.map { $0.first ?? 0 })")
            #expect(reads.allSatisfy { $0.count == 1 })
        }
    }

    @Test("reading while notifications flow: each read echo is dropped, nothing else")
    func readsBetweenNotifications() async throws {
        try await Self.run { fixture, _, peripheral in
            let rate = try await Self.rate(peripheral)
            let values = try await rate.subscribe()
            var sent: [Data] = []
            for byte in UInt8(1)...10 {
                try Self.notify(fixture, Data([byte]))
                sent.append(Data([byte]))
                #expect(try await rate.read() == Data([byte]), "a read returns the latest value")
            }
            try Self.notify(fixture, Data([0xFF]))
            #expect(try await collect(values, count: 11) == sent + [Data([0xFF])])
        }
    }

    /// An iteration of the heart rate that reads nothing while 0…9 are notified, returned once
    /// a marker on the battery level, notified after them, has arrived: by then the peripheral
    /// has handled all ten. The marker's own iteration, which keeps up, loses nothing.
    private static func fallBehind(_ fixture: SimulatorFixture, _ peripheral: Peripheral) async throws
        -> (NotificationSequence, NotificationSequence.AsyncIterator)
    {
        let rate = try await Self.rate(peripheral)
        let slow = try await rate.subscribe()
        let slowValues = slow.makeAsyncIterator()
        let level = try await peripheral.characteristic(BluetoothUUID("2A19"), in: BluetoothUUID("180F"))
        let marker = try await level.subscribe()
        for byte in UInt8(0)..<10 { try Self.notify(fixture, Data([byte])) }
        try Self.notify(fixture, Data([0xAA]), uuid: "2A19")
        #expect(try await collect(marker, count: 1) == [Data([0xAA])])
        #expect(marker.droppedCount == 0)
        return (slow, slowValues)
    }

    @Test("a slow subscriber loses values beyond its buffer, counted; others are unaffected")
    func dropsCounted() async throws {
        var options = CentralOptions()
        options.notificationBufferSize = 2
        try await Self.run(options: options) { fixture, _, peripheral in
            var (slow, slowValues) = try await Self.fallBehind(fixture, peripheral)
            #expect(slow.droppedCount == 8)
            #expect(slowValues.droppedCount == 8, "the iteration counts its own losses")
            #expect(await slowValues.next() == Data([0]))
            #expect(await slowValues.next() == Data([1]))
        }
    }

    @Test("dropOldest: a slow subscriber keeps the newest values, its losses counted per iteration")
    func dropOldestKeepsTheNewest() async throws {
        var options = CentralOptions()
        options.notificationBufferSize = 2
        options.notificationBufferPolicy = .dropOldest
        try await Self.run(options: options) { fixture, _, peripheral in
            var (slow, slowValues) = try await Self.fallBehind(fixture, peripheral)
            #expect(slowValues.droppedCount == 8)
            #expect(slow.droppedCount == 8)
            #expect(await slowValues.next() == Data([8]))
            #expect(await slowValues.next() == Data([9]))
            // Keeping up again, nothing more is lost.
            try Self.notify(fixture, Data([0x10]))
            #expect(await slowValues.next() == Data([0x10]))
            #expect(slowValues.droppedCount == 8)
        }
    }

    @Test("subscribing to a characteristic that cannot notify fails")
    func notNotifying() async throws {
        try await Self.run { _, _, peripheral in
            let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            #expect(await bleError { try await location.subscribe() }?.code == .notSupported)
            // The plain sequence ends instead.
            var iterator = location.notifications.makeAsyncIterator()
            #expect(await iterator.next() == nil)
        }
    }

    @Test("a refused StartNotify fails the subscription with the mapped error")
    func startNotifyRefused() async throws {
        try await Self.run { fixture, _, peripheral in
            fixture.simulator.inject(
                SimulatedFault(
                    .startNotify, address: Self.sensor,
                    action: .fail(name: BlueZErrorName.notPermitted, message: BlueZErrorMessage.notPaired)))
            let rate = try await Self.rate(peripheral)
            let error = await bleError { try await rate.subscribe() }
            #expect(error?.code == .notPermitted)
            #expect(error?.message == BlueZErrorMessage.notPaired)
            // The fault is spent: subscribing again works.
            _ = try await rate.subscribe()
        }
    }

    /// The object path of the characteristic with `uuid`, from bluetoothd's object tree.
    static func characteristicPath(_ probe: BusProbe, uuid: String) async throws -> String? {
        let reply = try await probe.call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        guard case .dictionary(_, _, let objects)? = reply.body.first else { return nil }
        for object in objects {
            guard case .objectPath(let path) = object.key, case .dictionary(_, _, let interfaces) = object.value else {
                continue
            }
            for interface in interfaces where interface.key == .string("org.bluez.GattCharacteristic1") {
                guard case .dictionary(_, _, let properties) = interface.value else { continue }
                if properties.contains(where: {
                    $0.key == .string("UUID") && $0.value.unwrappingVariant == .string(uuid)
                }) {
                    return path.rawValue
                }
            }
        }
        return nil
    }
}
