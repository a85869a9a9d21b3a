import BlueZ
import DBus
import Foundation

/// What the exported GATT objects share with the manager: the published attributes, the
/// subscription state per characteristic, the MTUs centrals reported, and the request stream.
///
/// bluetoothd's calls are answered on the bus connection's I/O thread (deferred and immediate
/// handlers), so this state lives under a lock rather than in the actor.
final class GattServerCore: Sendable {
    /// Subscription state of one characteristic.
    struct NotifyState: Sendable {
        var uuid: BluetoothUUID
        var notifying = false
        var channel: NotifyChannel?
        /// Tells a hang-up of the current channel from one of a channel already replaced.
        var channelToken = 0
    }

    struct State: Sendable {
        var attributes: [ObjectPath: PublishedAttribute] = [:]
        var notify: [ObjectPath: NotifyState] = [:]
        var mtus: [CentralID: UInt16] = [:]
        var nextToken = 1
    }

    let state = PosixMutex(State())
    let requestContinuation: AsyncStream<PeripheralRequest>.Continuation
    let events: EventBroadcast<PeripheralManagerEvent>
    let requestTimeout: Duration
    let logger: BLELogger
    /// The bus connection, whose I/O thread reads the notify channels' confirmations.
    let connection: Connection

    init(
        requests: AsyncStream<PeripheralRequest>.Continuation, events: EventBroadcast<PeripheralManagerEvent>,
        requestTimeout: Duration, logger: BLELogger, connection: Connection
    ) {
        self.connection = connection
        self.requestContinuation = requests
        self.events = events
        self.requestTimeout = requestTimeout
        self.logger = logger
    }

    // MARK: Reads and writes

    /// `ReadValue(a{sv})`: a static value is answered here; anything else becomes a request.
    func read(_ call: DBusMessage, _ reply: MethodReply, at path: ObjectPath) {
        let options = RequestOptions(call.body.first)
        guard let attribute = attribute(at: path, remembering: options) else {
            return reply.fail(ATTError.unlikely.reply)
        }
        if let value = attribute.staticValue {
            guard Int(options.offset) <= value.count else { return reply.fail(ATTError.invalidOffset.reply) }
            return reply.succeed([.bytes(Data(value.dropFirst(Int(options.offset))))])
        }
        deliver(
            PeripheralRequest(
                kind: .read, central: options.central, attribute: attribute, options: options, value: Data(),
                writeType: nil, reply: reply))
    }

    /// `WriteValue(ay, a{sv})`: always a request; a call without reply is a write command.
    func write(_ call: DBusMessage, _ reply: MethodReply, at path: ObjectPath) {
        guard call.body.count == 2, case .bytes(let value) = call.body[0] else {
            return reply.fail(ATTError.unlikely.reply)
        }
        let options = RequestOptions(call.body[1])
        guard let attribute = attribute(at: path, remembering: options) else {
            return reply.fail(ATTError.unlikely.reply)
        }
        guard attribute.staticValue == nil else { return reply.fail(ATTError.writeNotPermitted.reply) }
        let type = options.writeType(noReplyExpected: call.noReplyExpected)
        deliver(
            PeripheralRequest(
                kind: .write, central: options.central, attribute: attribute, options: options, value: value,
                writeType: type, reply: call.noReplyExpected ? nil : reply))
    }

    private func attribute(at path: ObjectPath, remembering options: RequestOptions) -> PublishedAttribute? {
        state.withLock { state in
            if let central = options.central, let mtu = options.mtu { state.mtus[central] = mtu }
            return state.attributes[path]
        }
    }

    /// Hands a request to the app; one the buffer cannot take is refused at once.
    private func deliver(_ request: PeripheralRequest) {
        logger.log(.debug, "request: \(request)")
        request.arm(timeout: requestTimeout)
        switch requestContinuation.yield(request) {
        case .enqueued: break
        case .dropped, .terminated: request.respond(with: .insufficientResources)
        @unknown default: request.respond(with: .insufficientResources)
        }
    }

    // MARK: Subscriptions

    /// `StartNotify()`: called at every new subscription, without saying by whom.
    func startNotify(at path: ObjectPath) {
        guard let uuid = setNotifying(true, at: path) else { return }
        events.yield(.subscribed(characteristic: uuid, central: nil))
    }

    /// `StopNotify()`: the last subscriber left.
    func stopNotify(at path: ObjectPath) {
        guard let uuid = setNotifying(false, at: path) else { return }
        events.yield(.unsubscribed(characteristic: uuid, central: nil))
    }

    private func setNotifying(_ on: Bool, at path: ObjectPath) -> BluetoothUUID? {
        state.withLock { state in
            state.notify[path]?.notifying = on
            return state.notify[path]?.uuid
        }
    }

    /// `AcquireNotify(a{sv})`: a socket pair whose other end goes to bluetoothd with the MTU.
    func acquireNotify(_ call: DBusMessage, at path: ObjectPath) throws(BLEError) -> [DBusValue] {
        let options = RequestOptions(call.body.first)
        let central = options.central
        let mtu = options.mtu ?? 23
        let found = state.withLock { state -> (BluetoothUUID, Int)? in
            defer { state.nextToken += 1 }
            return state.notify[path].map { ($0.uuid, state.nextToken) }
        }
        guard let (uuid, token) = found else { throw BLEError(.notFound, message: "no such characteristic") }
        let (channel, theirs) = try NotifyChannel.open(mtu: mtu, central: central, on: connection) { [events] in
            events.yield(.indicationConfirmed(characteristic: uuid))
        } closed: { [weak self] in
            self?.channelClosed(at: path, token: token)
        }
        let previous = state.withLock { state -> NotifyChannel? in
            if let central { state.mtus[central] = mtu }
            defer {
                state.notify[path]?.channel = channel
                state.notify[path]?.channelToken = token
                state.notify[path]?.notifying = true
            }
            return state.notify[path]?.channel
        }
        previous?.close()
        events.yield(.subscribed(characteristic: uuid, central: central))
        return [.unixFD(theirs), .uint16(mtu)]
    }

    /// bluetoothd hung up the channel: the last subscriber left or disconnected.
    private func channelClosed(at path: ObjectPath, token: Int) {
        let closed = state.withLock { state -> (BluetoothUUID, NotifyChannel)? in
            guard let notify = state.notify[path], notify.channelToken == token, let channel = notify.channel else {
                return nil
            }
            state.notify[path]?.channel = nil
            state.notify[path]?.notifying = false
            return (notify.uuid, channel)
        }
        guard let (uuid, channel) = closed else { return }
        // Stops a pending readiness watch before the descriptor goes.
        channel.close()
        events.yield(.unsubscribed(characteristic: uuid, central: channel.central))
    }

    /// `Confirm()` (no reply expected): a central confirmed an indication.
    func confirm(at path: ObjectPath) {
        guard let uuid = state.withLock({ $0.notify[path]?.uuid }) else { return }
        events.yield(.indicationConfirmed(characteristic: uuid))
    }

    /// Forgets every subscription (bluetoothd left, or the services went): channels close,
    /// and each characteristic that had subscribers reports ``PeripheralManagerEvent/unsubscribed(characteristic:central:)``.
    func dropSubscriptions(at paths: [ObjectPath]? = nil) {
        let (channels, ended) = state.withLock { state -> ([NotifyChannel], [(BluetoothUUID, CentralID?)]) in
            var channels: [NotifyChannel] = []
            var ended: [(BluetoothUUID, CentralID?)] = []
            for path in paths ?? Array(state.notify.keys) {
                guard let notify = state.notify[path] else { continue }
                if let channel = notify.channel { channels.append(channel) }
                if notify.notifying { ended.append((notify.uuid, notify.channel?.central)) }
                state.notify[path]?.channel = nil
                state.notify[path]?.notifying = false
            }
            return (channels, ended)
        }
        for channel in channels { channel.close() }
        for (uuid, central) in ended { events.yield(.unsubscribed(characteristic: uuid, central: central)) }
    }
}
