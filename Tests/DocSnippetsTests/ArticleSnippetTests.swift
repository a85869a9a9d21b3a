import BLE
import BLESimulator
import Foundation
import Testing

@testable import DocSnippets

/// The code shown in the DocC articles runs, on the simulator, and does what the articles say.
@Suite("Article snippets")
struct ArticleSnippetTests {
    @Test("Getting started: scan, connect, read")
    func firstScan() async throws {
        let result = try await SnippetFixture.run { fixture in
            try await GettingStarted.firstScan(bus: fixture.blePath)
        }
        #expect(result.name == "HRM")
        #expect(result.location == Data([0x02]))
    }

    @Test("Getting started: live values arrive through notifications")
    func liveValues() async throws {
        let values = try await SnippetFixture.run { fixture in
            try await fixture.connected { peripheral in
                let pusher = fixture.heartbeats(every: .milliseconds(20))
                defer { pusher.cancel() }
                return try await GettingStarted.liveValues(of: peripheral, count: 3)
            }
        }
        #expect(values.count == 3)
        #expect(values.allSatisfy { $0.count == 2 && $0.first == 0 })
    }

    @Test("Connections: a dropped link is reported and re-established by the policy")
    func reconnect() async throws {
        let events = try await SnippetFixture.run { fixture in
            try await ConnectionsAndReconnection.reconnecting(bus: fixture.blePath, id: try fixture.id, events: 3) {
                _ in
                try? fixture.simulator.dropLink(address: SnippetFixture.address, after: .milliseconds(50))
            }
        }
        guard events.count == 3 else {
            Issue.record("expected 3 events, got \(events)")
            return
        }
        if case .disconnected = events[0] {} else { Issue.record("first event \(events[0])") }
        if case .reconnecting(let attempt, _) = events[1] {
            #expect(attempt == 1)
        } else {
            Issue.record("second event \(events[1])")
        }
        if case .connected = events[2] {} else { Issue.record("third event \(events[2])") }
    }

    @Test("Pairing: the keypad handler's passkey bonds; a wrong one fails; forget drops the bond")
    func pairing() async throws {
        var monitor = SnippetFixture.heartRateMonitor()
        monitor.pairing = SimulatedPairing(ioCapability: .displayOnly, passkey: 246_810)
        let outcome = try await SnippetFixture.run(monitor: monitor) { fixture in
            try await Pairing.pairWithPasskey(bus: fixture.blePath, id: try fixture.id, typed: 246_810, forget: true)
        }
        #expect(outcome.paired)
        #expect(!outcome.afterForget)
        let wrong = try await SnippetFixture.run(monitor: monitor) { fixture in
            let id = try fixture.id
            do throws(BLEError) {
                _ = try await Pairing.pairWithPasskey(bus: fixture.blePath, id: id, typed: 1, forget: false)
                return BLEError.Code.failed
            } catch {
                return error.code
            }
        }
        #expect(wrong == .authenticationFailed)
    }

    @Test(
        "Pairing: a peripheral asking for a bond by itself is bonded through the default handler",
        .timeLimit(.minutes(1)))
    func peerPairing() async throws {
        var monitor = SnippetFixture.heartRateMonitor()
        monitor.pairing.requestsSecurity = .encrypted
        let paired = try await SnippetFixture.run(monitor: monitor) { fixture in
            try await Pairing.bondRequestedByPeripheral(bus: fixture.blePath, id: try fixture.id)
        }
        #expect(paired)
    }

    @Test("Notifications: subscribe first, then trigger; nothing is lost")
    func subscribeFirst() async throws {
        let result = try await SnippetFixture.run { fixture in
            try await fixture.connected { peripheral in
                let measurement = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
                return try await NotificationsAndBackPressure.subscribeThenTrigger(measurement, expecting: 50) {
                    for index in 0..<50 {
                        _ = try? fixture.simulator.notify(
                            address: SnippetFixture.address, characteristic: "2A37", value: Data([0, UInt8(index)]))
                    }
                }
            }
        }
        #expect(result.values == 50)
        #expect(result.dropped == 0)
    }

    @Test("Notifications: the buffer size option reaches the central")
    func bufferSize() async throws {
        let size = try await SnippetFixture.run { fixture in
            let central = try await NotificationsAndBackPressure.largeBuffers(bus: fixture.blePath)
            defer { Task { await central.close() } }
            return central.options.notificationBufferSize
        }
        #expect(size == 65_536)
    }

    @Test("Notifications: the buffer policy option reaches the central")
    func bufferPolicy() async throws {
        let (size, policy) = try await SnippetFixture.run { fixture in
            let central = try await NotificationsAndBackPressure.latestValues(bus: fixture.blePath)
            defer { Task { await central.close() } }
            return (central.options.notificationBufferSize, central.options.notificationBufferPolicy)
        }
        #expect(size == 16)
        #expect(policy == .dropOldest)
    }

    @Test("Notifications: AcquireNotify delivers the same values")
    func acquired() async throws {
        let values = try await SnippetFixture.run { fixture in
            try await fixture.connected { peripheral in
                let measurement = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
                let pusher = fixture.heartbeats(every: .milliseconds(10))
                defer { pusher.cancel() }
                return await NotificationsAndBackPressure.acquired(measurement, count: 3)
            }
        }
        #expect(values.count == 3)
    }

    @Test("Writing: chunks never exceed the link's limit")
    func chunks() async throws {
        let (chunks, limit, written) = try await SnippetFixture.run { fixture in
            try await fixture.connected { peripheral in
                let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
                let limit = await peripheral.maximumWriteLength(for: .withoutResponse)
                let payload = Data((0..<(limit * 2 + 5)).map { UInt8($0 & 0xFF) })
                let chunks = try await WritingAndMTU.sendChunked(payload, to: control)
                let last = try fixture.simulator.value(address: SnippetFixture.address, characteristic: "2A39")
                return (chunks, limit, last)
            }
        }
        #expect(limit > 0)
        #expect(chunks == 3)
        #expect(written?.count == 5)
    }

    @Test("Writing: the write channel reports the exact MTU")
    func writeChannel() async throws {
        let mtu = try await SnippetFixture.run { fixture in
            try await fixture.connected { peripheral in
                let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
                return try await WritingAndMTU.stream([Data([1]), Data([2]), Data([3])], to: control)
            }
        }
        #expect(mtu >= 23)
    }

    @Test("Errors: a transient failure is retried, then the read succeeds")
    func retry() async throws {
        let value = try await SnippetFixture.run { fixture in
            try await fixture.connected { peripheral in
                let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
                fixture.simulator.inject(
                    SimulatedFault(
                        .read, address: SnippetFixture.address, characteristic: "2A38",
                        action: .fail(name: "org.freedesktop.DBus.Error.NoReply", message: "Did not receive a reply")))
                return try await ErrorsAndRetries.readWithRetry(location)
            }
        }
        #expect(value == Data([0x02]))
    }

    @Test("Errors: a permanent failure is thrown at once")
    func noRetry() async throws {
        await #expect(throws: BLEError.self) {
            try await SnippetFixture.run { fixture in
                try await fixture.connected { peripheral in
                    let location = try await peripheral.characteristic(
                        BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
                    fixture.simulator.inject(
                        SimulatedFault(
                            .read, address: SnippetFixture.address, characteristic: "2A38",
                            action: .fail(name: "org.bluez.Error.NotPermitted", message: "Read not permitted"), count: 5
                        )
                    )
                    return try await ErrorsAndRetries.readWithRetry(location)
                }
            }
        }
    }

    @Test("Testing with the simulator: an injected ATT error reaches the app")
    func simulatorFault() async throws {
        let code = try await TestingWithSimulator.thermometerFault()
        #expect(code == .attError)
    }
}
