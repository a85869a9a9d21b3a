import BlueZ
import DBus

extension Peripheral {
    func addAcquiredSubscriber(_ subscriber: NotificationSubscriber, to path: ObjectPath) async {
        let channel = gatt.acquired[path] ?? AcquiredNotifyChannel(path: path, client: client)
        gatt.acquired[path] = channel
        channel.add(subscriber)
        do {
            try await attachAcquired(path, channel)
        } catch {
            if channel.remove(subscriber.id) {
                channel.finish()
                gatt.acquired[path] = nil
            }
            subscriber.buffer.finish()
        }
    }

    func removeAcquiredSubscriber(_ id: UInt64, from path: ObjectPath) {
        guard let channel = gatt.acquired[path], channel.remove(id) else { return }
        // Closing our end is how a client releases an acquired notify (BlueZ sees the hang-up).
        channel.finish()
        gatt.acquired[path] = nil
    }

    /// Calls AcquireNotify unless the channel already has a live socket; concurrent callers
    /// share one call (bluetoothd refuses a second AcquireNotify of the same client).
    private func attachAcquired(_ path: ObjectPath, _ channel: AcquiredNotifyChannel) async throws(BLEError) {
        guard !channel.isAttached else { return }
        let attempt: SharedAttempt<Void>
        if let pending = gatt.attaching[path] {
            attempt = pending
        } else {
            attempt = SharedAttempt(
                Task(executorPreference: session.connection.executor) { [self] () -> Result<Void, BLEError> in
                    do throws(BLEError) {
                        let reply = try await perform(
                            GattCall(
                                path: path, interface: BlueZInterface.gattCharacteristic1,
                                member: BlueZMethod.acquireNotify,
                                arguments: [.dictionary(key: .string, value: .variant, [])]))
                        guard reply.body.count == 2, case .unixFD(let descriptor) = reply.body[0] else {
                            throw BLEError(
                                .protocolError, message: "AcquireNotify replied (\(reply.signature)), not (hq)")
                        }
                        channel.attach(descriptor, on: session.connection)
                        return .success(())
                    } catch {
                        return .failure(error)
                    }
                })
            gatt.attaching[path] = attempt
        }
        let result = await attempt.join(diagnostics: session.diagnostics, executor: session.connection.executor)
        if gatt.attaching[path] === attempt { gatt.attaching[path] = nil }
        try result.get()
    }

    /// After a (re)connection: acquire fresh sockets for channels that still have subscribers.
    func reacquireChannels() async {
        for (path, channel) in gatt.acquired where !channel.isEmpty {
            try? await attachAcquired(path, channel)
        }
    }
}
