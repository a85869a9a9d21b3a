/// The deadline of one publication call (add or remove a service), counted from the call: what
/// is left of it for each call to bluetoothd, or ``BLEError/Code/timeout`` once it has passed
/// (also while the publication waited for another one to finish).
struct PublicationDeadline {
    let instant: ContinuousClock.Instant
    let what: String

    init(_ timeout: Duration, for what: String) {
        instant = .now + timeout
        self.what = what
    }

    func remaining() throws(BLEError) -> Duration {
        let left = instant - .now
        guard left > .zero else { throw BLEError.timeout(what) }
        return left
    }
}
