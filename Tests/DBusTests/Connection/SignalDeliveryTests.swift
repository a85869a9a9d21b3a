import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// Signals from one connection to another: order, buffering, header fields.
@Suite struct SignalDeliveryTests {
    static let tick = fixedMember("Tick")

    static func fixedMember(_ text: String) -> MemberName {
        do { return try MemberName(text) } catch { preconditionFailure("\(error)") }
    }

    private func emitTicks(_ range: Range<UInt32>, from emitter: Connection) throws {
        for value in range {
            try emitter.emitSignal(
                path: TestNames.object, interface: TestNames.interface, member: Self.tick, arguments: [.uint32(value)])
        }
    }

    private func ticks(_ messages: [DBusMessage]) -> [UInt32] {
        messages.compactMap { try? $0.argument(0, as: UInt32.self) }
    }

    private func tickRule(from emitter: Connection) -> MatchRule {
        MatchRule(sender: emitter.uniqueName, interface: TestNames.interface, member: Self.tick)
    }

    @Test func twoThousandSignalsArriveInOrder() async throws {
        try await withConnections(2) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            let reader = SignalReader(try await listener.signals(matching: tickRule(from: emitter)))
            try emitTicks(0..<2_000, from: emitter)
            let received = await reader.next(2_000)
            #expect(ticks(received) == Array(0..<2_000))
            #expect(reader.subscription.droppedCount == 0)
        }
    }

    /// A bounded subscription whose consumer does not read keeps the oldest messages and
    /// counts the ones it dropped.
    @Test func boundedSubscriptionKeepsTheFirstAndCountsTheRest() async throws {
        try await withConnections(2) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            try exportPing(on: emitter)
            let reader = SignalReader(
                try await listener.signals(matching: tickRule(from: emitter), buffering: .bounded(10)))
            try emitTicks(0..<100, from: emitter)
            // The reply leaves the emitter after the signals, so they have all been routed.
            try await roundTrip(from: listener, to: emitter)
            #expect(reader.subscription.droppedCount == 90)
            let kept = await reader.cancelAndDrain()
            #expect(ticks(kept) == Array(0..<10))
        }
    }

    /// Subscriptions without explicit buffering use the connection's default.
    @Test func defaultBufferingComesFromTheOptions() async throws {
        var options = testOptions
        options.defaultSignalBuffering = .bounded(5)
        try await withConnections(2, options: options) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            try exportPing(on: emitter)
            let reader = SignalReader(try await listener.signals(matching: tickRule(from: emitter)))
            try emitTicks(0..<12, from: emitter)
            try await roundTrip(from: listener, to: emitter)
            #expect(reader.subscription.droppedCount == 7)
            #expect(ticks(await reader.cancelAndDrain()) == Array(0..<5))
        }
    }

    @Test func signalsCarryTheirHeaderAndBody() async throws {
        try await withConnections(2) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            let reader = SignalReader(try await listener.signals(matching: tickRule(from: emitter)))
            let body: [DBusValue] = [
                .uint32(1), .string("two"), .variant(.bytes(Data([3]))),
                .dictionary(key: .string, value: .variant, [DBusDictionaryEntry(.string("k"), .variant(.int16(4)))]),
            ]
            try emitter.emitSignal(
                path: TestNames.object, interface: TestNames.interface, member: Self.tick, arguments: body)
            let message = try #require(await reader.next())
            #expect(message.kind == .signal)
            #expect(message.sender == emitter.uniqueName)
            #expect(message.path == TestNames.object)
            #expect(message.interface == TestNames.interface)
            #expect(message.member == Self.tick)
            #expect(message.destination == nil)
            #expect(message.body == body)
            #expect(message.signature == "usva{sv}")
        }
    }

    /// A signal with a destination reaches that connection only.
    @Test func unicastSignalsReachOnlyTheirDestination() async throws {
        try await withConnections(3) { _, connections in
            let (emitter, target, bystander) = (connections[0], connections[1], connections[2])
            try exportPing(on: emitter)
            let targetReader = SignalReader(try await target.signals(matching: tickRule(from: emitter)))
            let bystanderReader = SignalReader(try await bystander.signals(matching: tickRule(from: emitter)))
            try emitter.emitSignal(
                path: TestNames.object, interface: TestNames.interface, member: Self.tick, arguments: [.uint32(1)],
                destination: target.uniqueName)
            try emitTicks(2..<3, from: emitter)
            try await roundTrip(from: target, to: emitter)
            try await roundTrip(from: bystander, to: emitter)
            let toTarget = await targetReader.cancelAndDrain()
            #expect(ticks(toTarget) == [1, 2])
            #expect(toTarget.first?.destination == target.uniqueName)
            #expect(ticks(await bystanderReader.cancelAndDrain()) == [2])
        }
    }

    /// A connection receives the signals it emits itself when it subscribes to them.
    @Test func aConnectionHearsItsOwnSignals() async throws {
        try await withConnections(1) { _, connections in
            let connection = connections[0]
            let reader = SignalReader(try await connection.signals(matching: tickRule(from: connection)))
            try emitTicks(0..<3, from: connection)
            #expect(ticks(await reader.next(3)) == [0, 1, 2])
        }
    }
}
