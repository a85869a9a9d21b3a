import BlueZ
import DBus

/// The central's `org.bluez.Agent1`: registered with bluetoothd before this process connects or
/// pairs, so `Pair` uses it (bluetoothd prefers the caller's own agent) and, when it is the
/// default agent, so do pairings a peripheral starts; it answers through the
/// app's ``PairingHandler``.
///
/// Calls are accepted only from the current owner of `org.bluez`
/// (``DBus/ExportedInterface/acceptedSender``); everyone else gets
/// `org.freedesktop.DBus.Error.AccessDenied` and the handler never runs. bluetoothd forgets
/// agents when it restarts, so registration is checked against its current unique name.
final class PairingAgent: Sendable {
    static let path = (try? ObjectPath("/org/swift_ble/agent")) ?? .root

    private struct State {
        var exported = false
        /// The bluetoothd instance (unique name) that has the agent registered.
        var registeredWith: BusName?
        /// Requests being answered, each with its way to give up.
        var inFlight: [UInt64: @Sendable () -> Void] = [:]
        var nextRequest: UInt64 = 0
        /// The serial of bluetoothd's latest `Cancel`: requests it sent before that are over,
        /// even when their handler task starts after the `Cancel`'s (each method runs on a task
        /// of its own, so their order is not the order bluetoothd sent them in).
        /// Kept with bluetoothd's unique name: a restarted bluetoothd numbers from 1 again.
        var cancelledAt: (sender: BusName?, serial: UInt32)?

        /// Whether bluetoothd's latest `Cancel` came after `message` (same bluetoothd, later
        /// serial): a request it ends, or an older `Cancel`.
        func cancelled(after message: DBusMessage) -> Bool {
            guard let cancelled = cancelledAt, cancelled.sender == message.sender else { return false }
            return !PropertyRefreshes.isOlder(cancelled.serial, than: message.serial)
        }
    }

    private let session: BlueZSession
    private let handler: any PairingHandler
    private let answerTimeout: Duration
    private let state = PosixMutex(State())

    init(session: BlueZSession, handler: any PairingHandler, answerTimeout: Duration) {
        self.session = session
        self.handler = handler
        self.answerTimeout = answerTimeout
    }

    // MARK: Registration

    /// Whether the running bluetoothd has the agent: checked without suspending, so that a
    /// connect does not leave its executor for a registration that is already done.
    var isRegistered: Bool {
        guard let owner = session.owner else { return false }
        return state.withLock { $0.registeredWith == owner }
    }

    /// Exports the agent (once) and registers it with the running bluetoothd unless it already
    /// is; the call waits at most `timeout` (the session's call timeout when nil).
    func register(timeout: Duration? = nil) async throws(BLEError) {
        guard let owner = session.owner else { throw session.unavailable }
        if state.withLock({ $0.registeredWith == owner }) { return }
        let export = state.withLock { state -> Bool in
            defer { state.exported = true }
            return !state.exported
        }
        if export {
            do {
                try session.connection.export([try agentInterface()], at: Self.path)
            } catch {
                state.withLock { $0.exported = false }
                throw BLEError(error)
            }
        }
        do {
            _ = try await session.call(
                BlueZService.managerPath, BlueZInterface.agentManager1, BlueZMethod.registerAgent,
                [.objectPath(Self.path), .string(handler.capability.rawValue)], timeout: timeout)
        } catch {
            // AlreadyExists: registered by a concurrent call on this connection (one per client).
            guard error.dbusErrorName == BlueZErrorName.alreadyExists else { throw error }
        }
        state.withLock { $0.registeredWith = owner }
    }

    /// Unregisters without waiting (bluetoothd drops the agent anyway when the connection
    /// leaves the bus) and stops answering.
    func close() {
        let registered = state.withLock { state -> Bool in
            defer { state.registeredWith = nil }
            return state.registeredWith != nil && state.registeredWith == session.owner
        }
        if registered {
            try? session.connection.send(
                DBusMessage(
                    kind: .methodCall, path: BlueZService.managerPath, interface: BlueZInterface.agentManager1,
                    member: BlueZMethod.unregisterAgent, destination: BlueZService.busName, noReplyExpected: true,
                    body: [.objectPath(Self.path)]))
        }
        giveUpAll()
        session.connection.unexport(Self.path)
    }

    // MARK: Answering

    private func agentInterface() throws(DBusError) -> ExportedInterface {
        let handler = self.handler
        let object = try Signature("o")
        return ExportedInterface(
            BlueZInterface.agent1,
            methods: [
                ExportedMethod(BlueZMethod.requestPasskey, in: object, out: try Signature("u")) { [weak self] call in
                    let id = try Self.peripheral(call)
                    let passkey = try await self?.answer(call) { await handler.passkey(for: id) } ?? nil
                    guard let passkey, passkey <= 999_999 else { throw Self.rejected }
                    return [.uint32(passkey)]
                },
                ExportedMethod(BlueZMethod.displayPasskey, in: try Signature("ouq")) { [weak self] call in
                    let id = try Self.peripheral(call)
                    guard call.body.count == 3, case .uint32(let passkey) = call.body[1],
                        case .uint16(let entered) = call.body[2]
                    else { throw Self.rejected }
                    _ = try await self?.answer(call) {
                        await handler.display(passkey: passkey, entered: entered, for: id)
                    }
                    return []
                },
                ExportedMethod(BlueZMethod.requestConfirmation, in: try Signature("ou")) { [weak self] call in
                    let id = try Self.peripheral(call)
                    guard case .uint32(let passkey)? = call.body.last else { throw Self.rejected }
                    try await self?.require(call) { await handler.confirm(passkey: passkey, for: id) }
                    return []
                },
                ExportedMethod(BlueZMethod.requestAuthorization, in: object) { [weak self] call in
                    let id = try Self.peripheral(call)
                    try await self?.require(call) { await handler.authorize(id) }
                    return []
                },
                ExportedMethod(BlueZMethod.authorizeService, in: try Signature("os")) { [weak self] call in
                    let id = try Self.peripheral(call)
                    guard case .string(let uuid)? = call.body.last else { throw Self.rejected }
                    try await self?.require(call) { await handler.authorizeService(BluetoothUUID(uuid), for: id) }
                    return []
                },
                ExportedMethod(BlueZMethod.requestPinCode, in: object, out: try Signature("s")) { [weak self] call in
                    let id = try Self.peripheral(call)
                    let pin = try await self?.answer(call) { await handler.pinCode(for: id) } ?? nil
                    guard let pin, (1...16).contains(pin.utf8.count) else { throw Self.rejected }
                    return [.string(pin)]
                },
                ExportedMethod(BlueZMethod.displayPinCode, in: try Signature("os")) { [weak self] call in
                    let id = try Self.peripheral(call)
                    guard case .string(let pin)? = call.body.last else { throw Self.rejected }
                    _ = try await self?.answer(call) { await handler.display(pinCode: pin, for: id) }
                    return []
                },
                ExportedMethod(BlueZMethod.cancel) { [weak self] call in
                    self?.state.withLock { state in
                        if !state.cancelled(after: call) { state.cancelledAt = (call.sender, call.serial) }
                    }
                    self?.giveUpAll()
                    handler.cancelled()
                    return []
                },
                ExportedMethod(BlueZMethod.release) { [weak self] _ in
                    // bluetoothd is going away (or dropped us): register again next time.
                    self?.state.withLock { $0.registeredWith = nil }
                    self?.giveUpAll()
                    return []
                },
            ],
            acceptedSender: BlueZService.busName)
    }

    /// Runs `body` on a task of its own and returns its answer, or throws `Canceled` when the
    /// answer timeout passes or bluetoothd cancels first (the body's task is cancelled too,
    /// but a body that ignores cancellation cannot hold up the reply).
    private func answer<Value: Sendable>(
        _ request: DBusMessage, _ body: @escaping @Sendable () async -> Value
    ) async throws -> Value {
        // bluetoothd cancelled this request before its handler's turn came: never ask it.
        if state.withLock({ $0.cancelled(after: request) }) { throw Self.canceled }
        let slot = OnceSlot<Value>(diagnostics: session.diagnostics)
        let worker = Task { slot.finish(.success(await body())) }
        let giveUp: @Sendable () -> Void = {
            slot.finish(.failure(.cancelledByTask))
            worker.cancel()
        }
        let id = state.withLock { state -> UInt64 in
            state.nextRequest += 1
            state.inFlight[state.nextRequest] = giveUp
            return state.nextRequest
        }
        let timeout = answerTimeout
        let timer = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            giveUp()
        }
        defer {
            timer.cancel()
            _ = state.withLock { $0.inFlight.removeValue(forKey: id) }
        }
        switch await slot.wait() {
        case .success(let value): return value
        case .failure: throw Self.canceled
        }
    }

    /// Like ``answer(_:)`` for a yes-or-no question; no is `Rejected`.
    private func require(_ request: DBusMessage, _ body: @escaping @Sendable () async -> Bool) async throws {
        guard try await answer(request, body) else { throw Self.rejected }
    }

    private func giveUpAll() {
        let all = state.withLock { state in
            defer { state.inFlight.removeAll() }
            return Array(state.inFlight.values)
        }
        for giveUp in all { giveUp() }
    }

    /// The peripheral a request is about, from the device path bluetoothd passes first.
    private static func peripheral(_ call: DBusMessage) throws -> PeripheralID {
        guard case .objectPath(let path)? = call.body.first, let address = BlueZPath.deviceAddress(of: path),
            let adapter = path.parent?.elements.last
        else { throw rejected }
        return PeripheralID(adapter: String(adapter), bluetoothAddress: address)
    }

    static let rejected = DBusError.reply(BlueZErrorName.rejected, "the pairing handler refused")
    static let canceled = DBusError.reply(BlueZErrorName.canceled, "the pairing handler did not answer in time")
}
