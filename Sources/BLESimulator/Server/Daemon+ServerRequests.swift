import BlueZ
import DBus
import Foundation
import Glibc

extension Daemon {
    /// The longest attribute value (bluetoothd truncates replies and notifications to it).
    static let maxAttributeLength = 512

    // MARK: Read

    /// A remote ATT read, forwarded as `ReadValue(a{sv})` (bluez-dbus-api.md §5.4): the
    /// reply must start with an `ay`, which is truncated to 512 bytes.
    func forwardRead(_ target: ServerTarget, _ request: ServerRequestOptions) async throws(RemoteCentralError) -> Data {
        guard target.descriptor?.isReadable ?? target.characteristic.isReadable else {
            throw RemoteCentralError.rejected(0x02, "Read Not Permitted: the flags do not allow reads")
        }
        let reply: DBusMessage
        do throws(DBusError) {
            reply = try await connection.call(
                destination: target.key.owner, path: target.path, interface: target.interface,
                member: BlueZMethod.readValue, arguments: [request.dictionary], timeout: options.serverRequestTimeout)
        } catch {
            throw RemoteCentralError(call: error, isWrite: false)
        }
        guard case .bytes(let value)? = reply.body.first else {
            throw RemoteCentralError(.invalidReply, attError: 0x06, message: "ReadValue replied (\(reply.signature))")
        }
        return Data(value.prefix(Self.maxAttributeLength))
    }

    // MARK: Write

    /// A remote ATT write, forwarded as `WriteValue(ay, a{sv})`, or into the `AcquireWrite`
    /// socket when the application supports it. Commands, and every write to a
    /// `write-without-response` characteristic, do not wait for the application.
    func forwardWrite(
        _ value: Data, _ target: ServerTarget, _ request: ServerRequestOptions, type: RemoteWriteType
    ) async throws(RemoteCentralError) {
        guard target.descriptor?.isWritable ?? target.characteristic.isWritable else {
            // A command gets no response at all; the central never learns it was dropped.
            throw RemoteCentralError.rejected(type == .command ? nil : 0x03, "the flags do not allow writes")
        }
        if type == .command, value.count > Int(request.mtu) - 3 {
            throw RemoteCentralError.rejected(nil, "a Write Command carries at most MTU - 3 bytes")
        }
        guard Int(request.offset) + value.count <= Self.maxAttributeLength else {
            throw RemoteCentralError.rejected(0x0D, "Invalid Attribute Value Length")
        }
        if target.descriptor == nil, target.characteristic.supportsAcquireWrite,
            let socket = await writeSocket(target, request)
        {
            return try sendDatagram(value, socket, target)
        }
        let noWait =
            type == .command
            || (target.descriptor == nil && target.characteristic.flags.contains("write-without-response"))
        let message = DBusMessage(
            kind: .methodCall, path: target.path, interface: target.interface, member: BlueZMethod.writeValue,
            destination: target.key.owner, noReplyExpected: noWait, body: [.bytes(value), request.dictionary])
        if noWait {
            do throws(DBusError) { try connection.send(message) } catch { throw RemoteCentralError.notRunning }
            return
        }
        let reply: DBusMessage
        do throws(DBusError) {
            reply = try await connection.call(message, timeout: options.serverRequestTimeout)
        } catch {
            throw RemoteCentralError(call: error, isWrite: true)
        }
        guard reply.body.count < 2 else {
            throw RemoteCentralError(.invalidReply, attError: 0x06, message: "WriteValue replied (\(reply.signature))")
        }
    }

    // MARK: AcquireWrite

    /// The characteristic's `AcquireWrite` socket, acquired on first use; `nil` when the
    /// application refuses (bluetoothd then falls back to `WriteValue`).
    private func writeSocket(_ target: ServerTarget, _ request: ServerRequestOptions) async -> FileDescriptor? {
        let path = target.characteristic.path
        if let socket = core.state.withLock({ $0.server.applications[target.key]?.writeSockets[path] }) {
            return socket
        }
        let reply: DBusMessage
        do throws(DBusError) {
            reply = try await connection.call(
                destination: target.key.owner, path: path, interface: BlueZInterface.gattCharacteristic1,
                member: BlueZMethod.acquireWrite, arguments: [request.dictionary], timeout: options.serverRequestTimeout
            )
        } catch {
            return nil
        }
        guard reply.body.count == 2, case .unixFD(let socket) = reply.body[0], case .uint16 = reply.body[1],
            socket.rawValue >= 0
        else { return nil }
        return core.state.withLock { state -> FileDescriptor? in
            guard isCurrent(state), var record = state.server.applications[target.key] else {
                socket.close()
                return nil
            }
            // Two first writes raced: keep the socket stored first.
            if let existing = record.writeSockets[path] {
                socket.close()
                return existing
            }
            record.writeSockets[path] = socket
            state.server.applications[target.key] = record
            return socket
        }
    }

    /// One write = one datagram. A socket the application closed is dropped, so the next
    /// write acquires a new one.
    private func sendDatagram(_ value: Data, _ socket: FileDescriptor, _ target: ServerTarget)
        throws(RemoteCentralError)
    {
        let sent = value.withUnsafeBytes {
            Glibc.send(socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        }
        guard sent != value.count else { return }
        core.state.withLock { state in
            guard state.server.applications[target.key]?.writeSockets[target.characteristic.path] == socket else {
                return
            }
            state.server.applications[target.key]?.writeSockets[target.characteristic.path] = nil
        }
        socket.close()
        throw RemoteCentralError(
            .socketFailed, attError: 0x0E, message: "the AcquireWrite socket did not take the value")
    }
}
