import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// How subscriptions end, and that their match rules leave the bus with them.
@Suite struct SubscriptionLifecycleTests {
    static let beat = fixedMember("Beat")

    static func fixedMember(_ text: String) -> MemberName {
        do { return try MemberName(text) } catch { preconditionFailure("\(error)") }
    }

    private func emitBeat(_ value: Int32, from emitter: Connection) throws {
        try emitter.emitSignal(
            path: TestNames.object, interface: TestNames.interface, member: Self.beat, arguments: [.int32(value)])
    }

    /// A rule of its own for each `index`, so that nothing is shared between subscriptions.
    private func distinctRule(_ index: Int) -> MatchRule {
        MatchRule(interface: TestNames.interface, member: Self.beat, arguments: [0: "rule-\(index)"])
    }

    @Test func cancelEndsTheIteration() async throws {
        try await withConnections(2) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            let subscription = try await listener.signals(matching: MatchRule(interface: TestNames.interface))
            let received = EventLog<Int32>()
            let iteration = Task {
                var count = 0
                for await message in subscription {
                    received.record((try? message.argument(0, as: Int32.self)) ?? -1)
                    count += 1
                }
                return count
            }
            try emitBeat(1, from: emitter)
            #expect(await received.waitFor(1) == [1], "the iteration is running")
            subscription.cancel()
            #expect(try await within("the end of the iteration") { await iteration.value } == 1)
            // Cancelling again is harmless.
            subscription.cancel()
        }
    }

    @Test func cancellingTheIteratingTaskEndsTheIteration() async throws {
        try await withConnections(1) { _, connections in
            let subscription = try await connections[0].signals(matching: MatchRule(interface: TestNames.interface))
            let iteration = Task {
                var count = 0
                for await _ in subscription { count += 1 }
                return count
            }
            iteration.cancel()
            #expect(try await within("the end of the iteration") { await iteration.value } == 0)
        }
    }

    /// The bus allows 512 match rules per connection: 600 subscriptions made and ended one after
    /// another only fit if each one's rule is removed when it ends.
    @Test func matchRulesLeaveTheBusWhenSubscriptionsAreCancelled() async throws {
        try await withConnections(2) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            for index in 0..<600 {
                let subscription = try await listener.signals(matching: distinctRule(index))
                subscription.cancel()
            }
            try await expectWorkingSubscription(listener, emitter)
        }
    }

    /// Dropping every reference to a subscription ends it too, rule included.
    @Test func matchRulesLeaveTheBusWhenSubscriptionsAreDropped() async throws {
        try await withConnections(2) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            for index in 0..<600 {
                _ = try await listener.signals(matching: distinctRule(index))
            }
            try await expectWorkingSubscription(listener, emitter)
        }
    }

    /// Without removal the bus refuses the 513th rule: the limit the two tests above rely on.
    @Test func theBusRefusesMoreThan512MatchRules() async throws {
        try await withConnections(1) { _, connections in
            var kept: [SignalSubscription] = []
            defer { for subscription in kept { subscription.cancel() } }
            for index in 0..<512 { kept.append(try await connections[0].signals(matching: distinctRule(index))) }
            let error = await expectDBusError { try await connections[0].signals(matching: distinctRule(512)) }
            #expect(error?.name == DBusError.StandardName.limitsExceeded)
        }
    }

    /// Two subscriptions with the same rule share it: ending one leaves the other receiving.
    @Test func aSharedRuleStaysWhileAnySubscriptionNeedsIt() async throws {
        try await withConnections(2) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            try exportPing(on: emitter)
            let rule = MatchRule(sender: emitter.uniqueName, interface: TestNames.interface, member: Self.beat)
            let first = try await listener.signals(matching: rule)
            let second = SignalReader(try await listener.signals(matching: rule))
            first.cancel()
            // A round trip on the listener's own queue: the cancellation has been handled.
            try await roundTrip(from: listener, to: emitter)
            try emitBeat(7, from: emitter)
            try await roundTrip(from: listener, to: emitter)
            #expect((await second.cancelAndDrain()).map { try? $0.argument(0, as: Int32.self) } == [7])
        }
    }

    @Test func closingTheConnectionEndsItsSubscriptions() async throws {
        try await withConnections(1) { _, connections in
            let reader = SignalReader(
                try await connections[0].signals(matching: MatchRule(interface: TestNames.interface)))
            connections[0].close()
            #expect(await reader.next() == nil)
            #expect(connections[0].isClosed)
            let error = await expectDBusError {
                try await connections[0].signals(matching: MatchRule(interface: TestNames.interface))
            }
            #expect(error?.code == .disconnected)
        }
    }

    @Test func nameOwnerChangesReportAcquireAndRelease() async throws {
        try await withConnections(2) { bus, connections in
            let (owner, watcher) = (connections[0], connections[1])
            let name = try busName("org.example.Watched")
            let changes = try await watcher.nameOwnerChanges(of: name)
            defer { changes.subscription.cancel() }
            try await owner.requestName(name)
            try await owner.releaseName(name)
            let acquired = try await nextChange(changes, where: { _ in true })
            #expect(acquired == NameOwnerChange(name: name, oldOwner: nil, newOwner: owner.uniqueName))
            let released = try await nextChange(changes, where: { _ in true })
            #expect(released == NameOwnerChange(name: name, oldOwner: owner.uniqueName, newOwner: nil))

            // Without a name, every change shows, such as a new connection's unique name.
            let all = try await watcher.nameOwnerChanges()
            defer { all.subscription.cancel() }
            let newcomer = try await bus.connect(options: testOptions)
            let newName = newcomer.uniqueName
            let appeared = try await nextChange(all, where: { $0.name == newName })
            #expect(appeared.oldOwner == nil)
            #expect(appeared.newOwner == newName)
            newcomer.close()
            let left = try await nextChange(all, where: { $0.name == newName })
            #expect(left.oldOwner == newName)
            #expect(left.newOwner == nil)
        }
    }

    /// The next change that satisfies `predicate`.
    private func nextChange(
        _ changes: NameOwnerChanges, where predicate: @escaping @Sendable (NameOwnerChange) -> Bool
    ) async throws -> NameOwnerChange {
        try await within("a NameOwnerChanged signal") {
            var iterator = changes.makeAsyncIterator()
            while let change = await iterator.next() {
                if predicate(change) { return change }
            }
            throw DeadlineExceeded(what: "a NameOwnerChanged signal before the subscription ended")
        }
    }

    /// One round trip shows a subscription receives again after all the churn.
    private func expectWorkingSubscription(_ listener: Connection, _ emitter: Connection) async throws {
        let reader = SignalReader(try await listener.signals(matching: distinctRule(10_000)))
        try emitter.emitSignal(
            path: TestNames.object, interface: TestNames.interface, member: Self.beat,
            arguments: [.string("rule-10000")])
        let message = try #require(await reader.next())
        #expect(try message.argument(0, as: String.self) == "rule-10000")
    }
}
