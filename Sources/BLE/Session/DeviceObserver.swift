/// Follows one device and the objects below it: the session tells it of each event that
/// changed them (and of bluetoothd or the bus coming and going) right after applying it to the
/// mirror, on the thread that applied it, with no buffer or task in between.
///
/// Signals are applied on the bus connection's I/O thread, which is also the executor of the
/// actors that observe (a ``Peripheral``): they act on an event before the loop dispatches the
/// next message, so what they read from the mirror is what bluetoothd had said up to that
/// event. The session reaches each observer by its device's path, without looking at the
/// others.
protocol DeviceObserver: AnyObject, Sendable {
    /// An event about the observed device (or bluetoothd coming and going). Must not block
    /// and must not call back into the session synchronously.
    func sessionEvent(_ event: SessionEvent)
}
