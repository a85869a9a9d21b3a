/// Runs `body` with a ``PeripheralManager`` and closes it on every exit: return, error, or
/// cancellation of the calling task. The services and the advertisement are unregistered
/// before the bus connection closes, so nothing the body published outlives it.
///
/// ```swift
/// try await withPeripheralManager(bus: .system) { manager in
///     try await manager.add(MutableService(uuid: "180F", characteristics: [
///         MutableCharacteristic(uuid: "2A19", properties: [.read], value: Data([100])),
///     ]))
///     try await manager.startAdvertising(Advertisement(serviceUUIDs: ["180F"]))
///     try? await Task.sleep(for: .seconds(60))   // cancellation ends the scope too
/// }
/// ```
public func withPeripheralManager<Result: Sendable>(
    bus: Bus = .system, adapter: String? = nil, options: PeripheralManagerOptions = PeripheralManagerOptions(),
    _ body: (PeripheralManager) async throws(BLEError) -> Result
) async throws(BLEError) -> Result {
    let manager = try await PeripheralManager(bus: bus, adapter: adapter, options: options)
    do throws(BLEError) {
        let result = try await body(manager)
        await manager.close()
        return result
    } catch {
        await manager.close()
        throw error
    }
}
