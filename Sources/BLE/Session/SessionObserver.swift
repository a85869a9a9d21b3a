/// Follows part of bluetoothd's object tree: the session tells it of each event that changed
/// that part (and of bluetoothd or the bus coming and going) right after applying it to the
/// mirror, on the thread that applied it, with no buffer or task in between.
///
/// Signals are applied on the bus connection's I/O thread, which is also the executor of the
/// SDK's actors: an observer acts on an event before the loop dispatches the next message, so
/// what it reads from the mirror is what bluetoothd had said up to that event. A peripheral
/// observes its device (found by its path, without looking at the other observers); a scan
/// observes its adapter's subtree.
protocol SessionObserver: AnyObject, Sendable {
    /// An event about the observed part (or bluetoothd coming and going). Must not block and
    /// must not call back into the session's events synchronously.
    func sessionEvent(_ event: SessionEvent)

    /// The session will tell nothing more: it was closed, or its bus went for good.
    func sessionEnded()
}

extension SessionObserver {
    func sessionEnded() {}
}
