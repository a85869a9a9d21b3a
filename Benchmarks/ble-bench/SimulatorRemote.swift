import DBus
import Foundation

/// ble-sim's control interface (`org.swiftble.Simulator1`, Scenarios/README.md), called over a
/// bus connection of its own: the public BLE API has no business reaching the simulator.
struct SimulatorRemote {
    let connection: Connection

    init() async throws {
        connection = try await Connection(bus: .system)
    }

    private func call(_ member: String, _ arguments: [DBusValue]) async throws -> DBusMessage {
        try await connection.call(
            destination: try BusName("org.swiftble.Simulator"), path: try ObjectPath("/org/swiftble/Simulator"),
            interface: try InterfaceName("org.swiftble.Simulator1"), member: try MemberName(member),
            arguments: arguments)
    }

    /// Starts a run of `count` stamped notifications (StampedNotification layout) every
    /// `intervalMicroseconds` from the peripheral's characteristic.
    func startNotifications(address: String, characteristic: String, count: Int, intervalMicroseconds: Int, size: Int)
        async throws
    {
        _ = try await call(
            "StartNotifications",
            [
                .string(address), .string(characteristic), .uint32(UInt32(count)),
                .uint32(UInt32(intervalMicroseconds)),
                .uint32(UInt32(size)),
            ])
    }

    /// Sends one value to subscribed centrals; returns how many deliveries were made.
    func notify(address: String, characteristic: String, value: Data) async throws -> UInt32 {
        let reply = try await call("Notify", [.string(address), .string(characteristic), .bytes(value)])
        guard case .uint32(let deliveries)? = reply.body.first else { throw BenchFailure(description: "Notify reply") }
        return deliveries
    }
}
