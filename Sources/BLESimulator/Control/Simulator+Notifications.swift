import BlueZ
import DBus
import Foundation

extension Simulator {
    /// The largest payload ``startNotifications(address:characteristic:count:interval:payload:)``
    /// sends: the longest attribute value ATT allows.
    public static let maximumNotificationPayload = 512

    /// Makes a peripheral push `count` notifications (or indications) from a characteristic,
    /// one every `interval` (zero: as fast as the simulator can), to every adapter connected to
    /// it and subscribed, for latency and loss benchmarks.
    ///
    /// Each value is a ``StampedNotification`` padded to `payload` bytes: `CLOCK_MONOTONIC`
    /// nanoseconds at send time, then the sequence number `0..<count`. Value `n` is due `n`
    /// intervals after the run starts: the schedule never runs early, and after a stall the
    /// overdue values go out back to back instead of shifting the rest, so the rate holds.
    /// Sequence numbers count attempts, not deliveries: a value nobody was subscribed to leaves a
    /// gap the receiver can see. Real links carry at most MTU − 3 bytes per notification; the simulator does not
    /// truncate, so keep `payload` within the peripheral's `mtu` − 3 to stay realistic.
    ///
    /// Returns when all are sent, or early when the task is cancelled.
    ///
    /// - Returns: how many deliveries were made (a value reaching two subscribed adapters counts
    ///   twice).
    /// - Throws: `UnknownPeripheral`, `UnknownCharacteristic`, or `InvalidArguments` for a negative
    ///   count or interval, or a payload outside 12…512 bytes (see ``SimulatorControlError``).
    @discardableResult
    public func startNotifications(
        address: String, characteristic uuid: String, count: Int, interval: Duration = .zero, payload: Int = 20
    ) async throws(DBusError) -> Int {
        let target = try Self.controlAddress(address)
        try requireCharacteristic(uuid, at: target)
        try Self.checkRun(count: count, interval: interval, payload: payload)
        let clock = ContinuousClock()
        let start = clock.now
        var delivered = 0
        for index in 0..<count {
            if interval > .zero, index > 0 {
                do { try await Task.sleep(until: start + interval * index, clock: clock) } catch { break }
            } else if index > 0, index.isMultiple(of: 64) {
                // Back-to-back pushes would otherwise hold this thread for the whole run.
                await Task.yield()
            }
            if Task.isCancelled { break }
            delivered += pushStamped(target, uuid, sequence: UInt32(truncatingIfNeeded: index), size: payload)
        }
        return delivered
    }

    /// One stamped value, stamped under the state lock right before it goes out, so the stamp
    /// does not include time spent waiting for the lock.
    private func pushStamped(_ address: BluetoothAddress, _ uuid: String, sequence: UInt32, size: Int) -> Int {
        withDaemon { daemon, state in
            let value = StampedNotification(timestamp: MonotonicNanos.now(), sequence: sequence).encoded(size: size)
            return daemon.broadcast(&state, address: address, characteristic: uuid, value: value)
        } ?? 0
    }

    static func checkRun(count: Int, interval: Duration, payload: Int) throws(DBusError) {
        guard count >= 0 else {
            throw SimulatorControlError.make(SimulatorControlError.invalidArguments, "count \(count) is negative")
        }
        guard interval >= .zero else {
            throw SimulatorControlError.make(SimulatorControlError.invalidArguments, "interval \(interval) is negative")
        }
        guard (StampedNotification.headerSize...maximumNotificationPayload).contains(payload) else {
            throw SimulatorControlError.make(
                SimulatorControlError.invalidArguments,
                "payload \(payload) is outside \(StampedNotification.headerSize)…\(maximumNotificationPayload) bytes")
        }
    }
}
