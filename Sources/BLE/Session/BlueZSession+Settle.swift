import BlueZ

extension BlueZSession {
    /// Waits, at most `limit`, until `condition` holds on the mirror, checking again after each
    /// of `events` (taken before the call whose outcome it waits for). A reply can overtake the
    /// signals bluetoothd sent before it: they reach the mirror on the session's own task.
    func settle(
        _ events: AsyncStream<SessionEvent>, within limit: Duration,
        until condition: @escaping @Sendable (BlueZObjectTree) -> Bool
    ) async {
        _ = try? await withDeadline(limit, what: "waiting for bluetoothd's signals") { () throws(BLEError) in
            if condition(self.tree) { return }
            for await _ in events where condition(self.tree) { return }
        }
    }
}
