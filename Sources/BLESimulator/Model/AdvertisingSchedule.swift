import BlueZ

/// When each advertiser sends next, bucketed by millisecond, so a scan tick touches only the
/// advertisers that are due instead of every peripheral in range (10,000 beacons at 1 s are
/// 100 per 10 ms tick, not 10,000).
///
/// Entries are never removed in place: an entry is valid while its peripheral's
/// `nextAdvertisement` still equals its due time, so replacing or removing a peripheral just
/// leaves a stale entry that ``takeDue(through:)`` returns and the caller ignores.
struct AdvertisingSchedule: Sendable {
    struct Entry: Sendable {
        var due: UInt64
        var address: BluetoothAddress
    }

    private static let bucketNanos: UInt64 = 1_000_000
    private var buckets: [UInt64: [Entry]] = [:]
    /// Every bucket up to this one has been taken.
    private var takenThrough: UInt64 = 0

    var isEmpty: Bool { buckets.isEmpty }

    mutating func add(_ address: BluetoothAddress, due: UInt64) {
        // A due time in a bucket already taken goes to the next one, never lost.
        let bucket = Swift.max(due / Self.bucketNanos, takenThrough &+ 1)
        buckets[bucket, default: []].append(Entry(due: due, address: address))
    }

    /// Removes and returns the entries due by `now`, earliest bucket first.
    mutating func takeDue(through now: UInt64) -> [Entry] {
        let last = now / Self.bucketNanos
        guard last > takenThrough else { return [] }
        var keys: [UInt64]
        if last - takenThrough <= UInt64(buckets.count) {
            keys = (takenThrough + 1...last).filter { buckets[$0] != nil }
        } else {
            // After a long pause, looking at the buckets there are is cheaper than the range.
            keys = buckets.keys.filter { $0 <= last }.sorted()
        }
        takenThrough = last
        var due: [Entry] = []
        for key in keys { due += buckets.removeValue(forKey: key) ?? [] }
        return due
    }

    /// The first advertisement of a peripheral: a phase within its interval fixed by its
    /// address, so advertisers with the same interval do not send in lockstep.
    static func firstDue(_ address: BluetoothAddress, intervalMs: Int, now: UInt64) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in address.description.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01b3
        }
        let interval = UInt64(Swift.max(1, intervalMs)) * 1_000_000
        return now &+ hash % interval
    }

    /// The event after one at `due`: an interval later plus the random 0–10 ms `advDelay` the
    /// Core specification adds to every advertising event (Vol 6, Part B, 4.4.2.2.1).
    static func nextDue(after due: UInt64, intervalMs: Int, now: UInt64) -> UInt64 {
        let interval = UInt64(Swift.max(1, intervalMs)) * 1_000_000
        var next = due &+ interval &+ UInt64.random(in: 0...10_000_000)
        // Events missed while nobody scanned are skipped, keeping the phase.
        if next <= now { next &+= ((now - next) / interval + 1) * interval }
        return next
    }
}
