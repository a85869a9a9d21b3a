import BLE
import Foundation

/// The code of the "Connections and reconnection" article.
enum ConnectionsAndReconnection {
    /// Connects with a reconnect policy and collects connection events until `stop` of them arrive.
    static func reconnecting(
        bus: Bus, id: PeripheralID, events stop: Int, whileWatching act: @Sendable (Peripheral) async -> Void
    ) async throws(BLEError) -> [ConnectionEvent] {
        // snippet.begin reconnect-policy
        var options = CentralOptions()
        options.reconnectPolicy = .exponentialBackoff(initial: .milliseconds(200), maximum: .seconds(30))
        let central = try await Central(bus: bus, options: options)
        let peripheral = try await central.connect(id, timeout: .seconds(10))

        let watcher = Task {
            var seen: [ConnectionEvent] = []
            for await event in peripheral.events {
                switch event {
                case .disconnected(let reason): print("link lost: \(reason)")
                case .reconnecting(let attempt, let delay): print("retry \(attempt) in \(delay)")
                case .connected: print("connected again; subscriptions are re-armed")
                case .reconnectFailed(let code): print("gave up: \(code)")
                case .servicesChanged: print("the GATT database changed; look the characteristics up again")
                case .pairingChanged(let isPaired): print(isPaired ? "bonded" : "bond removed")
                case .mtuChanged(let mtu): print("the link's MTU is \(mtu)")
                }
                seen.append(event)
                if seen.count == stop { break }
            }
            return seen
        }
        // snippet.end
        await act(peripheral)
        let events = await watcher.value
        try await peripheral.disconnect()
        await central.close()
        return events
    }
}
