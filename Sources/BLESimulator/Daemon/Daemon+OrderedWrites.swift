import DBus

/// A link's writes reach the peer in the order they were made: bluetoothd queues them on the
/// link's one ATT bearer, and the peer takes each after the one before. A fault that delays a
/// write therefore holds back the writes made after it on the same link, though nothing delays
/// those: without the order, a write with no fault overtook a held one and the peer kept the
/// older value.
extension Daemon {
    /// Runs `take` once `delay` has passed and every write made before it on `device`'s link
    /// has been taken; at once when nothing is delayed and no write waits before it (the usual
    /// case). Until then the write counts as in flight: link loss fails `reply` (ATT 0x0E).
    func inWriteOrder(
        _ state: inout SimState, _ device: ObjectPath, _ reply: MethodReply, after delay: Duration,
        _ take: @escaping @Sendable (Daemon, inout SimState) -> Void
    ) {
        guard var held = state.devices[device] else { return schedule(&state, after: delay, take) }
        if delay == .zero && held.writeOrder.isEmpty { return take(self, &state) }
        let id = held.nextOperation
        held.nextOperation += 1
        held.pendingOperations[id] = reply
        held.writeOrder.append(id)
        state.devices[device] = held
        schedule(&state, after: delay) { daemon, state in daemon.writeDue(&state, device, id, take) }
    }

    /// Write `id` may be taken: takes it and those after it that are due, in order, up to the
    /// first still delayed. A write the link's loss failed meanwhile is no longer in the order.
    private func writeDue(
        _ state: inout SimState, _ device: ObjectPath, _ id: Int,
        _ take: @escaping @Sendable (Daemon, inout SimState) -> Void
    ) {
        guard state.devices[device]?.writeOrder.contains(id) == true else { return }
        state.devices[device]?.writesDue[id] = take
        while let first = state.devices[device]?.writeOrder.first,
            let action = state.devices[device]?.writesDue.removeValue(forKey: first)
        {
            state.devices[device]?.writeOrder.removeFirst()
            guard state.devices[device]?.pendingOperations.removeValue(forKey: first) != nil else { continue }
            action(self, &state)
        }
    }
}
