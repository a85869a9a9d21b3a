import BlueZ
import DBus

extension Central {
    /// Makes BlueZ forget a peripheral (`Adapter1.RemoveDevice`): its bond (keys), its cached
    /// services, and the link if it is up. A ``Peripheral`` this central made disconnects first
    /// (so no reconnect policy fights the removal); found again by a scan, it works as before.
    ///
    /// Succeeds when BlueZ does not know the peripheral: there is nothing to forget.
    public func forget(_ id: PeripheralID) async throws(BLEError) {
        try checkOnThisAdapter(id)
        guard let path = session.tree.devicePath(address: id.bluetoothAddress, adapter: adapterPath) else { return }
        if let peripheral = peripherals[id] { try await peripheral.disconnect() }
        let events = session.events(under: path)
        defer { events.cancel() }
        do {
            _ = try await session.call(
                adapterPath, BlueZInterface.adapter1, BlueZMethod.removeDevice, [.objectPath(path)])
        } catch {
            // DoesNotExist: removed meanwhile (it expired, or another client removed it).
            guard error.dbusErrorName == BlueZErrorName.doesNotExist else { throw error }
        }
        await session.settle(events) { $0.interfaces(at: path) == nil }
    }
}
