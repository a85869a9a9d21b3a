import BLE
import BLESimulator
import BlueZ
import Foundation
import Synchronization
import Testing

/// `ReconnectPolicy`: the backoff arithmetic, and reconnection on the simulator with the
/// peripheral and its subscriptions kept.
@Suite("Reconnecting", .timeLimit(.minutes(1)))
struct ReconnectTests {
    static let hrm = SimulatorFixture.heartRateAddress

    @Test("never is the default and never reconnects")
    func never() {
        #expect(CentralOptions().reconnectPolicy == .never)
        #expect(!ReconnectPolicy.never.reconnects)
        #expect(ReconnectPolicy.never.baseDelay(attempt: 3) == .zero)
    }

    @Test("exponential backoff: 1 s, doubling, capped at 60 s")
    func backoffDelays() {
        let policy = ReconnectPolicy.exponentialBackoff()
        #expect(policy.reconnects)
        let delays = (1...9).map { policy.baseDelay(attempt: $0) }
        #expect(delays == [1, 2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
        #expect(policy.baseDelay(attempt: 10_000) == .seconds(60))
        #expect(policy.baseDelay(attempt: 0) == .seconds(1), "attempts count from 1")
    }

    @Test("jitter stays within ±20 % by default")
    func jitterBounds() {
        let policy = ReconnectPolicy.exponentialBackoff()
        for attempt in 1...8 {
            let base = policy.baseDelay(attempt: attempt)
            #expect(close(policy.delay(attempt: attempt, random: 0), base * 0.8))
            #expect(policy.delay(attempt: attempt, random: 0.5) == base)
            #expect(policy.delay(attempt: attempt, random: 0.999_999) < base * 1.2)
            for _ in 0..<50 {
                let delay = policy.delay(attempt: attempt)
                #expect(delay >= base * 0.8 && delay < base * 1.2)
            }
        }
    }

    private func close(_ lhs: Duration, _ rhs: Duration) -> Bool {
        lhs - rhs < .microseconds(1) && rhs - lhs < .microseconds(1)
    }

    @Test("parameters are clamped")
    func clamped() {
        let policy = ReconnectPolicy.exponentialBackoff(
            initial: .milliseconds(50), multiplier: 0.5, maximum: .seconds(1), jitter: 3)
        #expect(policy.multiplier == 1)
        #expect(policy.jitter == 1)
        #expect(policy.baseDelay(attempt: 5) == .milliseconds(50))
        let fast = ReconnectPolicy.exponentialBackoff(
            initial: .milliseconds(50), maximum: .milliseconds(150), jitter: 0)
        #expect((1...4).map { fast.delay(attempt: $0) } == [50, 100, 150, 150].map { Duration.milliseconds($0) })
    }

    static func fastPolicy(maximumAttempts: Int? = nil) -> CentralOptions {
        var options = CentralOptions()
        options.reconnectPolicy = .exponentialBackoff(
            initial: .milliseconds(50), maximum: .milliseconds(200), jitter: 0, maximumAttempts: maximumAttempts)
        options.connectTimeout = .seconds(10)
        return options
    }

    @Test("a dropped link is reconnected; the peripheral and its notifications carry on")
    func reconnectsAfterDrop() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected(options: Self.fastPolicy())
            let hr = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
            let values = try await hr.subscribe()
            var received = values.makeAsyncIterator()
            try fixture.simulator.notify(address: Self.hrm, characteristic: "2A37", value: Data([1]))
            #expect(await received.next() == Data([1]))

            let events = peripheral.events
            try fixture.simulator.dropLink(address: Self.hrm)
            let seen = try await collect(events, count: 3)
            #expect(seen == [.disconnected(.unknown), .reconnecting(attempt: 1, after: .milliseconds(50)), .connected])
            #expect(await peripheral.isConnected)
            #expect(fixture.simulator.statistics.connections == 2)

            // The same Characteristic object, the same iteration: notifications continue.
            try await eventually("notifications are re-armed") {
                try fixture.simulator.notify(address: Self.hrm, characteristic: "2A37", value: Data([2])) == 1
            }
            #expect(await received.next() == Data([2]))
            // 2A37 only notifies: a real peer refuses to read it (Read Not Permitted), so the
            // link is checked with 2A38.
            let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            #expect(try await location.read() == Data([0x01]))
            await central.close()
        }
    }

    @Test("transient failures are retried with growing delays")
    func retriesTransientFailures() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected(options: Self.fastPolicy())
            let abort = SimulatedFault.Action.fail(
                name: BlueZErrorName.failed, message: BlueZErrorMessage.leConnectionAbortByLocal)
            fixture.simulator.inject(SimulatedFault(.connect, address: Self.hrm, action: abort, count: 2))
            let events = peripheral.events
            try fixture.simulator.dropLink(address: Self.hrm, reason: .timeout)
            let seen = try await collect(events, count: 5)
            #expect(
                seen == [
                    .disconnected(.unknown),
                    .reconnecting(attempt: 1, after: .milliseconds(50)),
                    .reconnecting(attempt: 2, after: .milliseconds(100)),
                    .reconnecting(attempt: 3, after: .milliseconds(200)),
                    .connected,
                ])
            await central.close()
        }
    }

    @Test("a failure that is not transient stops reconnecting")
    func stopsOnPermanentFailure() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected(options: Self.fastPolicy())
            fixture.simulator.inject(
                SimulatedFault(
                    .connect, address: Self.hrm,
                    action: .fail(
                        name: BlueZErrorName.authenticationFailed, message: BlueZErrorMessage.authenticationFailed)))
            let events = peripheral.events
            try fixture.simulator.dropLink(address: Self.hrm)
            let seen = try await collect(events, count: 3)
            #expect(
                seen == [
                    .disconnected(.unknown), .reconnecting(attempt: 1, after: .milliseconds(50)),
                    .reconnectFailed(.authenticationFailed),
                ])
            #expect(await peripheral.state == .disconnected)
            await central.close()
        }
    }

    @Test("attempts run out")
    func attemptsRunOut() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected(options: Self.fastPolicy(maximumAttempts: 2))
            let abort = SimulatedFault.Action.fail(
                name: BlueZErrorName.failed, message: BlueZErrorMessage.leConnectionAbortByLocal)
            fixture.simulator.inject(SimulatedFault(.connect, address: Self.hrm, action: abort, count: nil))
            let events = peripheral.events
            try fixture.simulator.dropLink(address: Self.hrm)
            let seen = try await collect(events, count: 4)
            #expect(seen.first == .disconnected(.unknown))
            #expect(
                Array(seen.dropFirst().prefix(2)) == [
                    .reconnecting(attempt: 1, after: .milliseconds(50)),
                    .reconnecting(attempt: 2, after: .milliseconds(100)),
                ])
            #expect(seen.last == .reconnectFailed(.connectionFailed), "the last failure's code")
            fixture.simulator.clearFaults()
            await central.close()
        }
    }

    @Test("disconnect() does not reconnect")
    func localDisconnectDoesNotReconnect() async throws {
        try await SimulatorFixture.run { fixture in
            let recorder = LogRecorder()
            var options = Self.fastPolicy()
            options.logger = recorder.logger
            let (central, peripheral) = try await fixture.connected(options: options)
            let connects = recorder.count("Device1.Connect")
            let events = peripheral.events
            try await peripheral.disconnect()
            #expect(try await first(events) { _ in true } == .disconnected(.local))
            // A later drop-and-reconnect of another peripheral would show here; this one stays down.
            try await handledByBluetoothd(central)
            #expect(recorder.count("Device1.Connect") == connects)
            #expect(await peripheral.state == .disconnected)
            await central.close()
        }
    }

    @Test("the policy can be changed on a peripheral")
    func changePolicy() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected()
            await peripheral.setReconnectPolicy(.exponentialBackoff(initial: .milliseconds(50), jitter: 0))
            let events = peripheral.events
            try fixture.simulator.dropLink(address: Self.hrm)
            let seen = try await collect(events, count: 3)
            #expect(seen.last == .connected)
            await central.close()
        }
    }
}
