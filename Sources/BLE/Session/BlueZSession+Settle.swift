import BlueZ

extension BlueZSession {
    /// How long a call's outcome may wait for the signals that belong to it.
    static let settleLimit = Duration.seconds(2)

    /// Waits, at most `limit`, until `condition` holds on the mirror, checking again after each
    /// of `events` (taken before the call whose outcome it waits for). A reply can overtake the
    /// signals bluetoothd sent before it, which reach the mirror on the session's own task, and
    /// some belong after it (5.66 sends `Connected=false` after its Disconnect reply).
    func settle(
        _ events: SessionEvents, within limit: Duration = settleLimit,
        until condition: @escaping @Sendable (BlueZObjectTree) -> Bool
    ) async {
        _ = try? await withDeadline(limit, what: "waiting for bluetoothd's signals", timedBy: connection) {
            () throws(BLEError) in
            if condition(self.tree) { return }
            for await _ in events where condition(self.tree) { return }
        }
    }
}
