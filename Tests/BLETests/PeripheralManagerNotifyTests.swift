import BLE
import BLESimulator
import Foundation
import Testing

/// Subscriptions and updates: notify channels (AcquireNotify) and PropertiesChanged(Value),
/// one and all centrals, back-pressure, indications, unsubscribing and disconnecting centrals.
@Suite("PeripheralManager: subscriptions and updates")
struct PeripheralManagerNotifyTests {
    static let first = Simulator.defaultRemoteCentral
    static let second = "AA:BB:CC:DD:EE:02"

    static func isSubscribed(_ event: PeripheralManagerEvent) -> Bool {
        if case .subscribed = event { true } else { false }
    }

    static func isUnsubscribed(_ event: PeripheralManagerEvent) -> Bool {
        if case .unsubscribed = event { true } else { false }
    }

    @Test("A subscription opens a notify channel naming the central; updates go through it")
    func acquiredChannel() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            try await manager.add(TestServices.heartRate)
            let events = manager.events
            let notifications = fixture.simulator.notifications(for: "2A37")
            try await fixture.simulator.remoteSubscribe(to: "2A37", mtu: 64)
            let event = try await nextEvent(events, Self.isSubscribed)
            let central = try CentralID(address: Self.first)
            guard case .subscribed(let characteristic, let subscriber)? = event else { return }
            #expect(characteristic == "2A37")
            #expect(subscriber == central)
            #expect(await manager.isNotifying("2A37"))
            #expect(await manager.maximumUpdateValueLength(for: central) == 61)
            try await manager.updateValue(Data([0x00, 0x48]), for: "2A37")
            let notification = try #require(try await nextNotification(notifications))
            #expect(notification.value == Data([0x00, 0x48]))
            #expect(notification.central == Self.first)
            #expect(notification.viaAcquiredSocket)
            // Longer than the channel's MTU − 3: refused, never truncated.
            let error = await bleError { try await manager.updateValue(Data(count: 62), for: "2A37") }
            #expect(error?.code == .invalidArguments)
        }
    }

    @Test("Without notify channels, StartNotify subscribes (no central named) and values go as PropertiesChanged")
    func propertiesChangedPath() async throws {
        var options = PeripheralManagerOptions()
        options.acquireNotify = false
        try await SimulatorFixture.withManager(options: options) { fixture, manager in
            try await manager.add(TestServices.heartRate)
            #expect(
                fixture.simulator.registeredApplications.first?.services[0].characteristics[0].supportsAcquireNotify
                    == false)
            let events = manager.events
            let notifications = fixture.simulator.notifications(for: "2A37")
            try await fixture.simulator.remoteSubscribe(to: "2A37")
            let event = try await nextEvent(events, Self.isSubscribed)
            guard case .subscribed(_, let central)? = event else { return }
            #expect(central == nil)
            #expect(try await manager.tryUpdateValue(Data([0x01]), for: "2A37") == true)
            let notification = try #require(try await nextNotification(notifications))
            #expect(notification.value == Data([0x01]))
            #expect(!notification.viaAcquiredSocket)
            // No central was named, so none can be chosen.
            let error = await bleError {
                try await manager.updateValue(
                    Data([2]), for: "2A37", onSubscribedCentrals: [try CentralID(address: Self.first)])
            }
            #expect(error?.code == .notFound)
            try await fixture.simulator.remoteUnsubscribe(from: "2A37")
            #expect(try await nextEvent(events, Self.isUnsubscribed) != nil)
            #expect(await !manager.isNotifying("2A37"))
            // A subscribed central disconnecting: bluetoothd calls StopNotify for the last one.
            try await fixture.simulator.remoteSubscribe(to: "2A37", central: Self.second)
            _ = try await nextEvent(events, Self.isSubscribed)
            #expect(await manager.isNotifying("2A37"))
            #expect(try await fixture.simulator.remoteDisconnect(central: Self.second) == 1)
            #expect(try await nextEvent(events, Self.isUnsubscribed) != nil)
            #expect(await !manager.isNotifying("2A37"))
        }
    }

    @Test("Update to one named central, and to all subscribed centrals (one notification each)")
    func oneAndAllCentrals() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            try await manager.add(TestServices.heartRate)
            let events = manager.events
            let notifications = fixture.simulator.notifications(for: "2A37")
            try await fixture.simulator.remoteSubscribe(to: "2A37")
            _ = try await nextEvent(events, Self.isSubscribed)
            let first = try CentralID(address: Self.first)
            let second = try CentralID(address: Self.second)
            try await manager.updateValue(Data([1]), for: "2A37", onSubscribedCentrals: [first])
            let toOne = try #require(try await nextNotification(notifications))
            #expect(toOne.central == Self.first)
            #expect(toOne.value == Data([1]))
            // A central that is not subscribed cannot be chosen.
            let error = await bleError {
                try await manager.updateValue(Data([2]), for: "2A37", onSubscribedCentrals: [second])
            }
            #expect(error?.code == .notFound)
            // The second central joins the open channel; everything goes to both.
            try await fixture.simulator.remoteSubscribe(to: "2A37", central: Self.second)
            try await manager.updateValue(Data([3]), for: "2A37")
            var receivers: Set<String> = []
            for _ in 0..<2 {
                let notification = try #require(try await nextNotification(notifications) { $0.value == Data([3]) })
                receivers.insert(notification.central)
            }
            #expect(receivers == [Self.first, Self.second])
        }
    }

    @Test("Back-pressure: a full channel makes tryUpdateValue return false, then readyToUpdate; nothing is lost")
    func backPressure() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            try await manager.add(TestServices.heartRate)
            let events = manager.events
            let notifications = fixture.simulator.notifications(for: "2A37")
            try await fixture.simulator.remoteSubscribe(to: "2A37")
            _ = try await nextEvent(events, Self.isSubscribed)
            fixture.simulator.holdNotifySockets(true)
            var sent: [UInt16] = []
            var full = false
            for index in UInt16(0)..<2000 {
                let value = Data([UInt8(index >> 8), UInt8(index & 0xFF)])
                if try await manager.tryUpdateValue(value, for: "2A37") {
                    sent.append(index)
                } else {
                    full = true
                    break
                }
            }
            #expect(full, "the channel never filled")
            // While held, a suspending update waits until its deadline.
            let timedOut = await bleError {
                try await manager.updateValue(Data([0xFF, 0xFF]), for: "2A37", timeout: .milliseconds(200))
            }
            #expect(timedOut?.code == .timeout)
            // Released: ready again, and a suspended update goes through.
            let next = UInt16(sent.count)
            let waiting = Task {
                try await manager.updateValue(Data([UInt8(next >> 8), UInt8(next & 0xFF)]), for: "2A37")
            }
            fixture.simulator.holdNotifySockets(false)
            #expect(try await nextEvent(events) { if case .readyToUpdate = $0 { true } else { false } } != nil)
            try await waiting.value
            sent.append(next)
            var received: [UInt16] = []
            for await notification in notifications {
                let bytes = [UInt8](notification.value)
                received.append(UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
                if received.count == sent.count { break }
            }
            #expect(received == sent)
        }
    }

    @Test("Indications are confirmed: through the channel (0x01) and through Confirm()")
    func indicationsConfirmed() async throws {
        for acquire in [true, false] {
            var options = PeripheralManagerOptions()
            options.acquireNotify = acquire
            try await SimulatorFixture.withManager(options: options) { fixture, manager in
                try await manager.add(TestServices.heartRate)
                let events = manager.events
                try await fixture.simulator.remoteSubscribe(to: "2A3A", indications: true)
                _ = try await nextEvent(events, Self.isSubscribed)
                try await manager.updateValue(Data([0x42]), for: "2A3A")
                let confirmed = try await nextEvent(events) {
                    if case .indicationConfirmed(characteristic: "2A3A") = $0 { true } else { false }
                }
                #expect(confirmed != nil, "acquire: \(acquire)")
            }
        }
    }

    @Test("The last central unsubscribing or disconnecting ends the subscription")
    func unsubscribeAndDisconnect() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            try await manager.add(TestServices.heartRate)
            let events = manager.events
            try await fixture.simulator.remoteSubscribe(to: "2A37")
            _ = try await nextEvent(events, Self.isSubscribed)
            try await fixture.simulator.remoteUnsubscribe(from: "2A37")
            let left = try await nextEvent(events, Self.isUnsubscribed)
            guard case .unsubscribed(let characteristic, let central)? = left else { return }
            #expect(characteristic == "2A37")
            #expect(central == (try CentralID(address: Self.first)))
            #expect(await !manager.isNotifying("2A37"))
            // Mid-subscription, the central disconnects: bluetoothd drops its CCC state.
            try await fixture.simulator.remoteSubscribe(to: "2A37", central: Self.second)
            _ = try await nextEvent(events, Self.isSubscribed)
            #expect(try await fixture.simulator.remoteDisconnect(central: Self.second) == 1)
            #expect(try await nextEvent(events, Self.isUnsubscribed) != nil)
            #expect(await !manager.isNotifying("2A37"))
            // With nobody subscribed an update still succeeds and goes nowhere.
            try await manager.updateValue(Data([1]), for: "2A37")
        }
    }

    @Test("Updates of unknown or non-notifying characteristics are typed errors")
    func updateErrors() async throws {
        try await SimulatorFixture.withManager { _, manager in
            try await manager.add(TestServices.heartRate)
            #expect(await bleError { try await manager.updateValue(Data([1]), for: "2A99") }?.code == .notFound)
            #expect(await bleError { try await manager.updateValue(Data([1]), for: "2A38") }?.code == .notSupported)
            #expect(
                await bleError { try await manager.updateValue(Data(count: 513), for: "2A37") }?.code
                    == .invalidArguments)
        }
    }

    @Test("Cancelling a suspended update ends it with cancelled")
    func cancelledUpdate() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            try await manager.add(TestServices.heartRate)
            let events = manager.events
            try await fixture.simulator.remoteSubscribe(to: "2A37")
            _ = try await nextEvent(events, Self.isSubscribed)
            fixture.simulator.holdNotifySockets(true)
            while try await manager.tryUpdateValue(Data([0]), for: "2A37") {}
            let task = Task { try await manager.updateValue(Data([1]), for: "2A37", timeout: .seconds(30)) }
            task.cancel()
            let error = await bleError { try await task.value }
            #expect(error?.code == .cancelled)
            fixture.simulator.holdNotifySockets(false)
        }
    }
}
