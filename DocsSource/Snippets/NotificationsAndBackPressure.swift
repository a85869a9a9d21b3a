import BLE
import Foundation

/// The code of the "Notifications and back-pressure" article.
enum NotificationsAndBackPressure {
    /// Subscribes before triggering the peripheral, then counts values and drops.
    static func subscribeThenTrigger(
        _ characteristic: Characteristic, expecting count: Int, trigger: @Sendable () async -> Void
    ) async throws(BLEError) -> (values: Int, dropped: Int) {
        // snippet.begin subscribe-first
        // subscribe() returns once StartNotify succeeded: nothing sent after it is missed.
        let values = try await characteristic.subscribe()
        await trigger()  // e.g. write a "start streaming" command
        var received = 0
        for await _ in values {
            received += 1
            if received == count { break }
        }
        print("received \(received), dropped \(values.droppedCount)")
        // snippet.end
        return (received, values.droppedCount)
    }

    /// A central whose notification buffers hold 64 Ki values per subscriber.
    static func largeBuffers(bus: Bus) async throws(BLEError) -> Central {
        // snippet.begin buffer-size
        var options = CentralOptions()
        options.notificationBufferSize = 65_536  // per subscriber; the oldest values are kept
        let central = try await Central(bus: bus, options: options)
        // snippet.end
        return central
    }

    /// A central whose notification loops keep the newest values when they fall behind.
    static func latestValues(bus: Bus) async throws(BLEError) -> Central {
        // snippet.begin buffer-policy
        var options = CentralOptions()
        options.notificationBufferSize = 16
        options.notificationBufferPolicy = .dropOldest  // a live reading: the newest values win
        let central = try await Central(bus: bus, options: options)
        // snippet.end
        return central
    }

    /// Reads notifications over the AcquireNotify socket instead of D-Bus signals.
    static func acquired(_ characteristic: Characteristic, count: Int) async -> [Data] {
        var received: [Data] = []
        // snippet.begin acquired-notifications
        for await value in characteristic.acquiredNotifications {  // one socket, no D-Bus per value
            received.append(value)
            if received.count == count { break }
        }
        // snippet.end
        return received
    }
}
