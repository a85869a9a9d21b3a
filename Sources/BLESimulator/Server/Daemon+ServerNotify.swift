import BlueZ
import DBus
import Foundation
import Glibc

extension Daemon {
    /// What a remote central's CCC write makes bluetoothd call in the application.
    private enum NotifyCall: Sendable {
        case nothing, startNotify, stopNotify, acquireNotify
    }

    // MARK: CCC writes

    /// A remote central enables notifications (or indications) on a characteristic:
    /// `AcquireNotify` when the application exports `NotifyAcquired` and no socket is open yet,
    /// else `StartNotify` at every new enable; its reply is ignored (bluez-dbus-api.md §5.4).
    func subscribe(
        _ target: ServerTarget, central: String, indications: Bool?, request: ServerRequestOptions
    ) async throws(RemoteCentralError) {
        let characteristic = target.characteristic
        let kind: ServerNotification.Kind
        switch indications {
        case nil: kind = characteristic.canNotify ? .notification : .indication
        case true?: kind = .indication
        case false?: kind = .notification
        }
        guard kind == .notification ? characteristic.canNotify : characteristic.canIndicate else {
            throw RemoteCentralError.rejected(0xFD, "the flags do not allow this CCC value")
        }
        let path = characteristic.path
        let call = core.state.withLock { state -> NotifyCall? in
            guard isCurrent(state), var record = state.server.applications[target.key],
                record.characteristic(at: path) != nil
            else { return nil }
            let previous = record.subscriptions[path]?[central]
            record.subscriptions[path, default: [:]][central] = kind
            state.server.applications[target.key] = record
            if previous == kind { return .nothing }
            guard characteristic.supportsAcquireNotify else { return .startNotify }
            return record.notifySockets[path] == nil ? .acquireNotify : .nothing
        }
        guard let call else { throw RemoteCentralError(.notFound, message: "the characteristic was unregistered") }
        switch call {
        case .startNotify:
            await callApplication(target, BlueZMethod.startNotify)
        case .acquireNotify:
            if !(await acquireNotify(target, request)) { await callApplication(target, BlueZMethod.startNotify) }
        case .nothing, .stopNotify:
            break
        }
    }

    /// A remote central disables notifications: when it was the last one, bluetoothd closes
    /// the `AcquireNotify` socket, or calls `StopNotify`.
    func unsubscribe(_ target: ServerTarget, central: String) async throws(RemoteCentralError) {
        let path = target.characteristic.path
        let call = core.state.withLock { state -> NotifyCall? in
            guard isCurrent(state), var record = state.server.applications[target.key] else { return nil }
            guard record.subscriptions[path]?.removeValue(forKey: central) != nil else { return .nothing }
            defer { state.server.applications[target.key] = record }
            guard record.subscriptions[path]?.isEmpty ?? true else { return .nothing }
            record.subscriptions[path] = nil
            guard let socket = record.notifySockets.removeValue(forKey: path) else { return .stopNotify }
            _ = Glibc.shutdown(socket.rawValue, Int32(SHUT_RDWR))
            return .nothing
        }
        guard let call else { throw RemoteCentralError(.notFound, message: "the characteristic was unregistered") }
        if case .stopNotify = call { await callApplication(target, BlueZMethod.stopNotify) }
    }

    /// Calls a method without arguments whose reply bluetoothd ignores; awaited (within the
    /// request deadline) so the application has seen it when the central's request returns.
    private func callApplication(_ target: ServerTarget, _ member: MemberName) async {
        _ = try? await connection.call(
            destination: target.key.owner, path: target.characteristic.path,
            interface: BlueZInterface.gattCharacteristic1, member: member, timeout: options.serverRequestTimeout)
    }

    // MARK: AcquireNotify

    /// Calls `AcquireNotify` and reads the returned socket; `false` when the application refused.
    private func acquireNotify(_ target: ServerTarget, _ request: ServerRequestOptions) async -> Bool {
        let path = target.characteristic.path
        let reply: DBusMessage
        do throws(DBusError) {
            reply = try await connection.call(
                destination: target.key.owner, path: path, interface: BlueZInterface.gattCharacteristic1,
                member: BlueZMethod.acquireNotify, arguments: [request.dictionary],
                timeout: options.serverRequestTimeout)
        } catch {
            return false
        }
        guard reply.body.count == 2, case .unixFD(let socket) = reply.body[0], case .uint16 = reply.body[1],
            socket.rawValue >= 0
        else { return false }
        let kept = core.state.withLock { state -> Bool in
            // The last central may have gone meanwhile, or another enable stored a socket first.
            guard isCurrent(state), var record = state.server.applications[target.key],
                record.notifySockets[path] == nil, !(record.subscriptions[path]?.isEmpty ?? true)
            else { return false }
            record.notifySockets[path] = socket
            state.server.applications[target.key] = record
            return true
        }
        if kept { readNotifySocket(socket, target.key, path) } else { socket.close() }
        return true
    }

    /// Each datagram the application writes is one notification or indication; the end of
    /// file (the application closed it, or bluetoothd shut it down) drops the socket.
    private func readNotifySocket(_ socket: FileDescriptor, _ key: RegistrationKey, _ path: ObjectPath) {
        let flags = fcntl(socket.rawValue, F_GETFL)
        _ = fcntl(socket.rawValue, F_SETFL, flags | O_NONBLOCK)
        let source = DispatchSource.makeReadSource(fileDescriptor: socket.rawValue, queue: core.serverNotifyQueue)
        source.setEventHandler { [weak self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(socket.rawValue, &buffer, buffer.count, 0)
                if count > 0 {
                    self?.socketNotification(Data(buffer[0..<count]), socket, key, path)
                    continue
                }
                if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
                source.cancel()
                return
            }
        }
        source.setCancelHandler { [weak self] in
            self?.notifySocketClosed(socket, key, path)
            socket.close()
        }
        source.resume()
    }

    private func socketNotification(_ value: Data, _ socket: FileDescriptor, _ key: RegistrationKey, _ path: ObjectPath)
    {
        core.state.withLock { state in
            guard isCurrent(state), state.server.applications[key]?.notifySockets[path] == socket else { return }
            deliverNotification(&state, key, characteristic: path, value, viaSocket: true)
        }
    }

    private func notifySocketClosed(_ socket: FileDescriptor, _ key: RegistrationKey, _ path: ObjectPath) {
        core.state.withLock { state in
            guard state.server.applications[key]?.notifySockets[path] == socket else { return }
            state.server.applications[key]?.notifySockets[path] = nil
        }
    }

    // MARK: Delivery

    /// Sends a value to every remote central subscribed to the characteristic (nothing when
    /// none is): one ``ServerNotification`` per central to the listeners. The simulated
    /// central confirms indications at once, which bluetoothd passes on as `Confirm()` (no
    /// reply expected), or as a `0x01` byte on an `AcquireNotify` socket.
    func deliverNotification(
        _ state: inout SimState, _ key: RegistrationKey, characteristic path: ObjectPath, _ value: Data, viaSocket: Bool
    ) {
        guard let record = state.server.applications[key], let characteristic = record.characteristic(at: path),
            let subscribers = record.subscriptions[path], !subscribers.isEmpty
        else { return }
        let payload = Data(value.prefix(Self.maxAttributeLength))
        for (central, kind) in subscribers.sorted(by: { $0.key < $1.key }) {
            let notification = ServerNotification(
                characteristic: characteristic.uuid, path: path, central: central, value: payload, kind: kind,
                viaAcquiredSocket: viaSocket)
            for listener in state.server.listeners.values where listener.characteristic == characteristic.uuid {
                listener.continuation.yield(notification)
            }
            guard kind == .indication else { continue }
            if viaSocket, let socket = record.notifySockets[path] {
                var confirmation: UInt8 = 0x01
                _ = Glibc.send(socket.rawValue, &confirmation, 1, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            } else {
                let confirm = DBusMessage(
                    kind: .methodCall, path: path, interface: BlueZInterface.gattCharacteristic1,
                    member: BlueZMethod.confirm, destination: key.owner, noReplyExpected: true)
                try? connection.send(confirm)
            }
        }
        bridgedNotification(&state, adapter: key.adapter, characteristic: characteristic.uuid, payload)
    }
}
