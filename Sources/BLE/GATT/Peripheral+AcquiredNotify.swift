import BlueZ
import DBus

extension Peripheral {
    func addAcquiredSubscriber(_ subscriber: NotificationSubscriber, to path: ObjectPath) async {
        let channel = gatt.acquired[path] ?? AcquiredNotifyChannel()
        gatt.acquired[path] = channel
        channel.add(subscriber)
        do {
            try await attachAcquired(path, channel)
        } catch {
            if channel.remove(subscriber.id) {
                channel.finish()
                gatt.acquired[path] = nil
            }
            subscriber.continuation.finish()
        }
    }

    func removeAcquiredSubscriber(_ id: UInt64, from path: ObjectPath) {
        guard let channel = gatt.acquired[path], channel.remove(id) else { return }
        // Closing our end is how a client releases an acquired notify (BlueZ sees the hang-up).
        channel.finish()
        gatt.acquired[path] = nil
    }

    /// Calls AcquireNotify unless the channel already has a live socket.
    private func attachAcquired(_ path: ObjectPath, _ channel: AcquiredNotifyChannel) async throws(BLEError) {
        guard !channel.isAttached else { return }
        await acquireQueue()
        defer { releaseQueue() }
        guard !channel.isAttached else { return }
        guard connectionState == .connected else { throw BLEError(.notConnected, message: "not connected") }
        let timeout = operationTimeout
        let result = await guarded { [self] () throws(BLEError) -> DBusMessage in
            try await self.session.call(
                path, BlueZInterface.gattCharacteristic1, BlueZMethod.acquireNotify,
                [.dictionary(key: .string, value: .variant, [])], timeout: timeout)
        }
        let reply = try result.get()
        guard reply.body.count == 2, case .unixFD(let descriptor) = reply.body[0] else {
            throw BLEError(.protocolError, message: "AcquireNotify replied (\(reply.signature)), not (hq)")
        }
        channel.attach(descriptor)
    }

    /// After a (re)connection: acquire fresh sockets for channels that still have subscribers.
    func reacquireChannels() async {
        for (path, channel) in gatt.acquired where !channel.isEmpty {
            try? await attachAcquired(path, channel)
        }
    }
}
