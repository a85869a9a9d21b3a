import BlueZ
import DBus

extension Simulator {
    /// A remote central disconnects: bluetoothd drops the CCC state of an unpaired central
    /// (`att_disconnected` → `clear_ccc_state` in `src/gatt-database.c`), which disables each
    /// of its subscriptions as a CCC write of 0 would: the last subscriber of a characteristic
    /// leaving closes the `AcquireNotify` socket or calls `StopNotify`.
    ///
    /// - Returns: how many subscriptions the central had.
    @discardableResult
    public func remoteDisconnect(central address: String = defaultRemoteCentral) async throws(RemoteCentralError) -> Int
    {
        let daemon = try runningDaemon()
        let targets = daemon.subscriptions(of: address)
        for target in targets { try await daemon.unsubscribe(target, central: address) }
        return targets.count
    }

    /// Holds (`true`) or releases (`false`) the reading of every application's `AcquireNotify`
    /// socket, as bluetoothd stops reading while the link is congested: the application's
    /// writes then fill the socket until it is released, and nothing is lost.
    public func holdNotifySockets(_ hold: Bool) {
        core.notifySocketsHeld.withLock { held in
            guard held != hold else { return }
            held = hold
            if hold { core.serverNotifyQueue.suspend() } else { core.serverNotifyQueue.resume() }
        }
    }
}

extension Daemon {
    /// Every characteristic the central is subscribed to, in registration order.
    func subscriptions(of central: String) -> [ServerTarget] {
        core.state.withLock { state -> [ServerTarget] in
            guard isCurrent(state) else { return [] }
            var targets: [ServerTarget] = []
            for (key, record) in state.server.orderedApplications where state.adapters.indices.contains(key.adapter) {
                for service in record.application.services {
                    for characteristic in service.characteristics
                    where record.subscriptions[characteristic.path]?[central] != nil {
                        targets.append(
                            ServerTarget(
                                key: key, adapterPath: state.adapters[key.adapter].path, characteristic: characteristic)
                        )
                    }
                }
            }
            return targets
        }
    }
}
