import DBus

/// Whether the mirror's `MTU` values are the current link's. bluetoothd drops `MTU` at a
/// disconnection and restores it at the next link without a signal (BlueZ quirk Q10), so after
/// a reconnection the mirror may hold the previous link's value until it is read again: once
/// per link, when first needed, and not at every connection.
final class LinkMTU: Sendable {
    private struct State {
        /// Counts links (and the gaps between them), so that a read answered after its link
        /// ended confirms nothing.
        var link: UInt64 = 0
        var up = false
        var current = false
    }

    /// A `PosixMutex`, which ThreadSanitizer sees (it cannot see `Synchronization.Mutex`).
    private let state = PosixMutex(State())

    /// The link came up (`up`), or ended or is being made (`!up`: a new count begins).
    func linkChanged(up: Bool) {
        state.withLock { state in
            state.up = up
            // Coming up keeps a read made while it was being made (the barrier after resolution).
            guard !up else { return }
            state.link &+= 1
            state.current = false
        }
    }

    /// The link a read starts in, when the link is up and its MTU not read yet; nil otherwise.
    func readNeeded() -> UInt64? {
        state.withLock { $0.up && !$0.current ? $0.link : nil }
    }

    /// Whether the mirror holds the MTU of the link that is up.
    var isCurrent: Bool { state.withLock { $0.up && $0.current } }

    /// The link that a read made during the resolution belongs to.
    var link: UInt64 { state.withLock { $0.link } }

    /// The mirror got the MTU of `link` (ignored when that link has ended).
    func confirm(link: UInt64) {
        state.withLock { if $0.link == link { $0.current = true } }
    }
}
