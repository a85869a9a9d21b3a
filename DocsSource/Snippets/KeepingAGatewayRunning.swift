import BLE
import Foundation

/// The code of the "Keeping a gateway running" article.
enum KeepingAGatewayRunning {
    /// Opens the gateway's central and streams the subscriptions the previous process had.
    static func start(
        bus: Bus, directory: URL, received: @escaping @Sendable (Data) -> Void
    ) async throws(BLEError) -> Central {
        // snippet.begin restore-gateway
        var options = CentralOptions()
        options.restoreIdentifier = "hr-gateway"
        options.restorationDirectory = directory  // default: ~/.local/state/swift-ble
        options.reconnectPolicy = .exponentialBackoff()
        let central = try await Central(bus: bus, options: options)
        if let restored = await central.restoredState {
            for characteristic in restored.subscriptions {
                Task { for await value in characteristic.notifications { received(value) } }
            }
        }
        // snippet.end
        return central
    }
}
