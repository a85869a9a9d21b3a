import BLE
import BLESimulator
import DBus
import Foundation
import Synchronization

/// One subscription the soak holds: the task iterating it, and what it received.
final class SoakSubscription: Sendable {
    let watch: SoakWatch
    let task: Task<Void, Never>
    /// Set when the iteration ended without the soak ending it (the SDK ended the sequence).
    let endedBySDK: SoakFlag

    init(watch: SoakWatch, task: Task<Void, Never>, endedBySDK: SoakFlag) {
        self.watch = watch
        self.task = task
        self.endedBySDK = endedBySDK
    }
}

/// A flag tasks share.
final class SoakFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}

extension SoakWorld {
    /// Subscribes to `kind`'s characteristic of peripheral `index`; its values are watched
    /// from the moment the subscription is confirmed.
    @discardableResult
    func subscribe(_ peripheral: Peripheral, _ index: Int, _ kind: SoakPayload.Kind) async throws(BLEError)
        -> SoakSubscription
    {
        let uuid = kind == .indication ? SoakPeripherals.indicating : SoakPeripherals.notifying
        let values = try await characteristic(peripheral, uuid).subscribe()
        let key = SoakStreams.Key(peripheral: index, kind: kind)
        let watch = SoakWatch(key, start: streams.mark(key))
        armed.withLock { $0[key, default: 0] += 1 }
        let endedBySDK = SoakFlag()
        let task = Task { [self] in
            for await value in values { watch.receive(value) }
            guard !Task.isCancelled else { return }
            // Ended by the SDK (services changed): checked now, up to what arrived.
            endedBySDK.set()
            disarm(key)
            for problem in watch.problems(until: nil, streams) { record.violation(problem) }
        }
        let subscription = SoakSubscription(watch: watch, task: task, endedBySDK: endedBySDK)
        slots.withLock { slots in
            if kind == .indication {
                slots[index, default: Slot()].indications = subscription
            } else {
                slots[index, default: Slot()].subscriptions.append(subscription)
            }
        }
        record.checked(kind == .indication ? "indication subscription" : "subscribe")
        return subscription
    }

    /// Ends a subscription the soak holds: once everything delivered up to now has arrived
    /// (the values are on the bus already; cancelling drops what is buffered), it is cancelled
    /// and checked against its window.
    func end(_ subscription: SoakSubscription) async {
        let key = subscription.watch.key
        guard !subscription.endedBySDK.isSet else { return }
        disarm(key)
        let end = streams.mark(key)
        // Bounded only so that a lost value fails the run instead of hanging it.
        try? await eventually(within: .seconds(10), "values delivered to \(key) arrive") {
            subscription.watch.covers(until: end, streams) || subscription.endedBySDK.isSet
        }
        subscription.task.cancel()
        await subscription.task.value
        let endedBySDK = subscription.endedBySDK.isSet
        if !endedBySDK {
            for problem in subscription.watch.problems(until: end, streams) { record.violation(problem) }
        }
    }

    private func disarm(_ key: SoakStreams.Key) {
        armed.withLock { armed in
            armed[key, default: 0] -= 1
            if armed[key] == 0 { armed[key] = nil }
        }
    }

    /// Keeps one indication subscription per connected peripheral for the whole run (it ends
    /// only when the services go, e.g. at a bluetoothd restart, and is then made again).
    func ensureIndications(_ index: Int, quiet: Bool = false) async {
        let key = SoakStreams.Key(peripheral: index, kind: .indication)
        guard let peripheral = peripheral(index), armed.withLock({ $0[key] == nil }), await peripheral.isConnected
        else { return }
        do throws(BLEError) {
            try await subscribe(peripheral, index, .indication)
            record.outcome("indication subscription", "ok", quiet: quiet, on: index)
        } catch {
            record.outcome("indication subscription", "\(error.code)", quiet: quiet, on: index)
        }
    }

    /// Sends one value with a fresh sequence number from a random armed subscription's
    /// characteristic; the simulator's log keeps it when it was delivered.
    func indicate(using random: inout SeededGenerator) {
        guard let key = armed.withLock({ $0.keys.sorted { "\($0)" < "\($1)" }.randomElement(using: &random) })
        else { return }
        streams.send(key, through: simulator)
    }

    /// Ends every subscription (each checked) and disconnects every peripheral.
    func tearDown() async {
        let all = slots.withLock { slots in
            defer { slots.removeAll() }
            return Array(slots.values)
        }
        for slot in all {
            for subscription in slot.subscriptions { await end(subscription) }
            if let indications = slot.indications { await end(indications) }
            _ = try? await slot.peripheral?.disconnect()
        }
    }
}
