import Synchronization

/// A flag set once, by whichever party gets there first (a reader stopping, a socket handed
/// over), readable from any thread.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)

    var isSet: Bool { value.load(ordering: .acquiring) }

    /// Sets the flag; returns whether this call set it.
    @discardableResult
    func set() -> Bool { !value.exchange(true, ordering: .acquiringAndReleasing) }
}
