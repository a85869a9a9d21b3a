import BlueZ
import DBus

extension Central {
    /// Trusts a peripheral BlueZ knows, or stops trusting it (`Device1.Trusted`), without
    /// connecting: a trusted device's requests are authorized without asking the pairing
    /// handler. Returns once the mirror shows the new value.
    ///
    /// - Throws: ``BLEError/Code/notFound`` when BlueZ does not know the peripheral (a scan
    ///   finds it), ``BLEError/Code/invalidArguments`` for an ID of another adapter.
    public func setTrusted(_ trusted: Bool, for id: PeripheralID) async throws(BLEError) {
        try checkOnThisAdapter(id)
        guard let path = session.tree.devicePath(address: id.bluetoothAddress, adapter: adapterPath) else {
            throw BLEError(.notFound, message: "BlueZ does not know \(id.address)")
        }
        let events = session.events(under: path)
        defer { events.cancel() }
        let arguments: [DBusValue] = [
            .string(BlueZInterface.device1.rawValue), .string(DeviceProperties.Key.trusted),
            .variant(.boolean(trusted)),
        ]
        _ = try await session.call(path, .properties, BlueZMethod.set, arguments)
        await session.settle(events) { (try? $0.device(at: path))??.trusted == trusted }
    }
}
