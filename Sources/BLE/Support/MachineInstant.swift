/// A point in time as the SDK's state machines keep it: a `ContinuousClock` instant, stored as
/// the `Duration` since a fixed origin.
///
/// `ContinuousClock.Instant` is resilient (its layout lives in the Swift runtime library), so
/// every copy, comparison or `nil` test of one, or of an optional or an enum that holds one,
/// goes through run-time value witnesses. The GATT queue keeps a deadline and a retry time per
/// operation and looks at every operation in flight per write; with 16 writes in flight that
/// was a twentieth of a write's cost. `Duration` is frozen: two integers, copied and compared
/// inline.
struct MachineInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Where every machine instant is counted from (set on first use).
    private static let origin = ContinuousClock.now

    /// The time since ``origin``.
    private let sinceOrigin: Duration

    private init(sinceOrigin: Duration) { self.sinceOrigin = sinceOrigin }

    init(_ instant: ContinuousClock.Instant) { sinceOrigin = instant - Self.origin }

    /// Now, on `ContinuousClock`.
    static var now: MachineInstant { MachineInstant(.now) }

    /// The same instant on `ContinuousClock`.
    var continuous: ContinuousClock.Instant { Self.origin + sinceOrigin }

    var description: String { "\(sinceOrigin) after the origin" }

    static func < (lhs: MachineInstant, rhs: MachineInstant) -> Bool { lhs.sinceOrigin < rhs.sinceOrigin }

    static func + (instant: MachineInstant, duration: Duration) -> MachineInstant {
        MachineInstant(sinceOrigin: instant.sinceOrigin + duration)
    }

    static func - (instant: MachineInstant, duration: Duration) -> MachineInstant {
        MachineInstant(sinceOrigin: instant.sinceOrigin - duration)
    }

    static func - (later: MachineInstant, earlier: MachineInstant) -> Duration {
        later.sinceOrigin - earlier.sinceOrigin
    }
}
