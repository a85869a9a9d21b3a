import BlueZ
import DBus

extension Daemon {
    /// A client left the bus: bluetoothd unregisters its applications and advertisements
    /// (bluez-dbus-api.md §5.2, §10 item 7). Called from ``clientLeft(_:)`` under the lock.
    func serverClientLeft(_ state: inout SimState, _ client: BusName) {
        state.server.adopt(generation: generation)
        for key in Array(state.server.applications.keys) where key.owner == client {
            state.server.applications.removeValue(forKey: key)?.tearDown()
        }
        state.server.pendingApplications = state.server.pendingApplications.filter { $0.owner != client }
        var adapters = Set<Int>()
        for key in Array(state.server.advertisements.keys) where key.owner == client {
            state.server.advertisements.removeValue(forKey: key)?.watcher?.cancel()
            adapters.insert(key.adapter)
        }
        state.server.pendingAdvertisements = state.server.pendingAdvertisements.filter { $0.owner != client }
        for adapter in adapters.sorted() { emitAdvertisingInstances(state, adapter: adapter) }
        refreshBridges(&state)
    }

    /// `ActiveInstances` and `SupportedInstances` of an adapter, in one `PropertiesChanged`.
    func emitAdvertisingInstances(_ state: SimState, adapter index: Int) {
        guard state.adapters.indices.contains(index) else { return }
        let active = state.server.advertisementCount(adapter: index, includingPending: false)
        let free = max(0, ServerState.maxAdvertisements - active)
        emit(
            state.adapters[index].path, BlueZInterface.leAdvertisingManager1,
            set: [
                (LEAdvertisingManagerProperties.Key.activeInstances, .byte(UInt8(clamping: active))),
                (LEAdvertisingManagerProperties.Key.supportedInstances, .byte(UInt8(clamping: free))),
            ])
    }
}
