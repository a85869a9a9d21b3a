import BlueZ
import DBus
import Foundation

extension GattBenchmarks {
    /// The AcquireNotify case without swift-ble: the same stamped run from ble-sim, its socket
    /// acquired over a bare D-Bus connection and read by a ``DatagramReceiver`` (`callback`: each
    /// value a `Data` handed to the consumer on the receiving thread; `async`: to a `for await`
    /// loop on that thread, with a cancellation handler per wait). The consumer does what the
    /// swift-ble case's does, so what is left between the two is swift-ble's own path.
    static func notifyWithoutSDK(mode: DatagramFloor.Mode, count: Int, interval: Int, size: Int) async throws
        -> String
    {
        let remote = try await SimulatorRemote()
        let bus = try await SimulatorReadBenchmark()
        let notify = DBusValue.string(GattFixture.notifyText)
        let path = try await bus.prepare { $0["UUID"] == notify }
        let reply = try await bus.connection.call(
            destination: BlueZService.busName, path: path, interface: BlueZInterface.gattCharacteristic1,
            member: BlueZMethod.acquireNotify, arguments: [.dictionary(key: .string, value: .variant, [])])
        guard case .unixFD(let descriptor)? = reply.body.first else {
            throw BenchFailure(description: "AcquireNotify replied (\(reply.signature)), not (hq)")
        }
        let tally = PosixMutex(NotificationTally(count: count))
        let receiver = DatagramReceiver(socket: descriptor.rawValue) { value in
            let now = Meter.monotonicNanoseconds()
            return tally.withLock { $0.receive(value, at: now) }
        }
        receiver.start(mode: mode)
        var phase = GattPhase(capacity: 0)
        let run = Task {
            try await remote.startNotifications(
                address: GattFixture.address(1), characteristic: GattFixture.notifyText, count: count,
                intervalMicroseconds: interval, size: size)
        }
        try await waitForValues(tally)
        receiver.stop()
        _ = receiver.finished.wait()
        phase.stop()
        try await run.value
        // As the swift-ble case ends: the socket released, the device disconnected, so the next
        // client connects afresh.
        descriptor.close()
        let device = try ObjectPath("/" + path.elements.prefix(4).joined(separator: "/"))
        _ = try await bus.connection.call(
            destination: BlueZService.busName, path: device, interface: BlueZInterface.device1,
            member: BlueZMethod.disconnect)
        return notificationReport(
            phase, tally, transport: "acquire", interval: interval, size: size,
            extra: [("receiver", "\"\(mode.rawValue)\"")], impl: "swift-runtime")
    }
}
