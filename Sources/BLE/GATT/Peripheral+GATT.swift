import BlueZ
import DBus
import Foundation

extension Peripheral {
    // MARK: Discovery

    /// The peripheral's services (optionally only those with `uuids`), with their
    /// characteristics and descriptors, as BlueZ resolved them.
    ///
    /// The same ``Characteristic`` objects come back while the services stay (as Core
    /// Bluetooth's `CBPeripheral.services` keeps its objects): the peripheral holds them, so
    /// a discovery after a reconnection builds nothing.
    public func discoverServices(_ uuids: [BluetoothUUID]? = nil) throws(BLEError) -> [Service] {
        guard connectionState == .connected else { throw BLEError(.notConnected, message: "not connected") }
        let devicePath = self.devicePath
        let version = session.read { $0.gattLayoutVersion(of: devicePath) }
        let all: [Service]
        if let kept = discovered.withLock({ $0 }), kept.version == version {
            all = kept.services
        } else {
            let layout = currentLayout(version: version)
            let entries = Dictionary(layout.services.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
            all = layout.services.map { service($0, entries: entries, including: []) }
            discovered.withLock { $0 = (layout.version, all) }
        }
        guard let uuids else { return all }
        return all.filter { uuids.contains($0.uuid) }
    }

    /// The service of `entry`, with the services it includes; `including` is the chain of
    /// services that include this one, where an include loop stops.
    private func service(
        _ entry: GattLayout.ServiceEntry, entries: [ObjectPath: GattLayout.ServiceEntry], including: Set<ObjectPath>
    ) -> Service {
        // Reached again round a loop: listed, without going round once more.
        let included =
            including.contains(entry.path)
            ? []
            : entry.includedPaths.compactMap { entries[$0] }.map {
                service($0, entries: entries, including: including.union([entry.path]))
            }
        return Service(
            uuid: entry.uuid, isPrimary: entry.isPrimary, handle: entry.handle, includedServices: included,
            characteristics: entry.characteristics.map { characteristicObject($0, serviceUUID: entry.uuid) },
            path: entry.path)
    }

    /// The decoded layout of the device's objects: the one kept, unless the mirror's objects
    /// below the device changed since it was taken (`version` is the mirror's now).
    private func currentLayout(version: UInt64) -> GattLayout {
        if let kept = gatt.layout, version == kept.version { return kept }
        let layout = session.read { GattLayout(device: devicePath, tree: $0) }
        gatt.layout = layout
        return layout
    }

    /// Lets go of the services last discovered: their characteristic objects hold this
    /// peripheral, so the central does this when it goes (and a services change does it too).
    nonisolated func forgetDiscoveredServices() {
        discovered.withLock { $0 = nil }
    }

    /// The first characteristic `uuid` of the first service `service`.
    public func characteristic(_ uuid: BluetoothUUID, in service: BluetoothUUID) throws(BLEError) -> Characteristic {
        for candidate in try discoverServices([service]) {
            if let match = candidate.characteristics.first(where: { $0.uuid == uuid }) { return match }
        }
        throw BLEError(.notFound, message: "no characteristic \(uuid) in service \(service)")
    }

    /// The characteristic of `entry`: the object already handed out, else a new one.
    private func characteristicObject(_ entry: GattLayout.CharacteristicEntry, serviceUUID: BluetoothUUID)
        -> Characteristic
    {
        if let cached = gatt.characteristics[entry.path]?.value { return cached }
        let created = Characteristic(
            uuid: entry.uuid, serviceUUID: serviceUUID, properties: entry.properties, handle: entry.handle,
            descriptors: entry.descriptors, peripheral: self, path: entry.path)
        gatt.characteristics[entry.path] = WeakCharacteristic(value: created)
        return created
    }

    /// Services changed: handed-out handles of vanished characteristics fail with
    /// ``BLEError/Code/servicesChanged`` for good (a later discovery hands out new objects,
    /// even for a characteristic at the same path); their notification iterations end.
    /// Returns whether any handle became invalid.
    @discardableResult
    func invalidateServices() -> Bool {
        let tree = session.tree
        var invalidated = false
        forgetDiscoveredServices()
        for path in gatt.characteristics.keys
        where !tree.contains(path, implementing: BlueZInterface.gattCharacteristic1) {
            if let stale = gatt.characteristics.removeValue(forKey: path)?.value {
                stale.validity.invalidate()
                invalidated = true
            }
            for subscriber in client.removeSubscribers(of: path) {
                subscriber.buffer.finish()
            }
            gatt.acquired.removeValue(forKey: path)?.finish()
            abandonNotifySession(path)
        }
        return invalidated
    }

    // MARK: Read and write

    private static let noOptions = DBusValue.dictionary(key: .string, value: .variant, [])
    private static let plainReadArguments = [noOptions]
    private static let requestOptions = typeOption(.withResponse)
    private static let commandOptions = typeOption(.withoutResponse)
    private static let reliableOptions = typeOption(.reliable)

    private static func typeOption(_ type: WriteType) -> DBusValue {
        .dictionary(
            key: .string, value: .variant, [DBusDictionaryEntry(.string("type"), .variant(.string(type.blueZType)))])
    }

    /// The options of a characteristic write of `type`, built once per type.
    private static func writeOptions(_ type: WriteType) -> DBusValue {
        switch type {
        case .withResponse: requestOptions
        case .withoutResponse: commandOptions
        case .reliable: reliableOptions
        }
    }

    /// Runs one GATT call in the peripheral's operation order (see ``GattOperationQueue``).
    nonisolated(nonsending) func perform(_ call: GattCall, timeout: Duration? = nil) async throws(BLEError)
        -> DBusMessage
    {
        // A task cancelled already is turned away by the client before anything is sent.
        try await client.perform(call, timeout: timeout ?? operationTimeout)
    }

    nonisolated(nonsending) func readValue(
        _ path: ObjectPath, offset: UInt16, timeout: Duration?, descriptor: Bool = false
    ) async throws(BLEError) -> Data {
        // The usual read (no offset) reuses one argument list: nothing is built per read.
        let arguments =
            offset == 0
            ? Self.plainReadArguments
            : [
                .dictionary(
                    key: .string, value: .variant, [DBusDictionaryEntry(.string("offset"), .variant(.uint16(offset)))])
            ]
        let call = GattCall(
            path: path, interface: descriptor ? BlueZInterface.gattDescriptor1 : BlueZInterface.gattCharacteristic1,
            member: BlueZMethod.readValue, arguments: arguments, isCharacteristicRead: !descriptor,
            readsWholeValue: !descriptor && offset == 0)
        let reply = try await perform(call, timeout: timeout)
        guard case .bytes(let value)? = reply.body.first else {
            throw BLEError(.protocolError, message: "ReadValue replied (\(reply.signature)), not (ay)")
        }
        return value
    }

    nonisolated(nonsending) func writeValue(
        _ path: ObjectPath, _ value: Data, type: WriteType, timeout: Duration?, descriptor: Bool = false
    ) async throws(BLEError) {
        // 20 bytes fit every link (ATT's smallest MTU is 23): only longer values need the limit.
        if type == .withoutResponse && !descriptor && value.count > 20 {
            let limit = await writeWithoutResponseLimit(path)
            guard value.count <= limit else {
                throw BLEError(
                    .invalidArguments,
                    message: "\(value.count) bytes exceed the \(limit)-byte limit of a write without response")
            }
        }
        let options = descriptor ? Self.noOptions : Self.writeOptions(type)
        let call = GattCall(
            path: path, interface: descriptor ? BlueZInterface.gattDescriptor1 : BlueZInterface.gattCharacteristic1,
            member: BlueZMethod.writeValue, arguments: [.bytes(value), options],
            isPipelined: type == .withoutResponse && !descriptor)
        _ = try await perform(call, timeout: timeout)
    }

    // MARK: Notifications

    func addSubscriber(_ subscriber: NotificationSubscriber, to path: ObjectPath) async throws(BLEError) {
        let id = subscriber.id
        let site = session.diagnostics.willSuspend()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: NotifyWaiter) in
                // An iteration that ended before its subscribing task got here has been
                // removed already (it cancels that task first): joining now would leave it
                // subscribed for good.
                guard !Task.isCancelled else { return waiter.resume(returning: .failure(.cancelledByTask)) }
                // The Value route exists before StartNotify is sent, so the first values are
                // kept. Routed and joined in one turn of the actor: awaiting in between let a
                // services change remove the route before the join.
                client.subscribe(path, subscriber)
                run(gatt.sessions[path, default: NotifySession()].join(id, waiter), for: path)
            }
        } onCancel: {
            Task(executorPreference: session.connection.executor) { await self.cancelJoin(id, at: path) }
        }
        session.diagnostics.didResume(site)
        if case .failure(let error) = result {
            removeSubscriber(id, from: path)
            subscriber.buffer.finish()
            throw error
        }
    }

    /// A subscriber ends (failed to join, or its iteration ended): its route goes, and it
    /// leaves the session, whether or not a services change removed the route first (the
    /// session counts each member's leave once, and ignores one it does not have).
    func removeSubscriber(_ id: UInt64, from path: ObjectPath) {
        _ = client.unsubscribe(path, id: id)
        run(gatt.sessions[path]?.leave(id) ?? [], for: path)
    }

    private func cancelJoin(_ id: UInt64, at path: ObjectPath) {
        run(gatt.sessions[path]?.cancelJoin(id) ?? [], for: path)
    }

    /// Runs a notify session's actions: waiters are resumed at once, StartNotify and StopNotify
    /// go out in a task of their own (in the peripheral's operation order) and report back.
    private func run(_ actions: [NotifySession.Action], for path: ObjectPath) {
        for action in actions {
            switch action {
            case .resume(let waiters, let result):
                for waiter in waiters { waiter.resume(returning: result) }
            case .start:
                Task(executorPreference: session.connection.executor) { await self.notify(start: true, at: path) }
            case .stop:
                Task(executorPreference: session.connection.executor) { await self.notify(start: false, at: path) }
            }
        }
        if gatt.sessions[path]?.isUnused == true { gatt.sessions[path] = nil }
        if gatt.sessions[path] == nil { followedCharacteristics.removeValue(forKey: path)?.cancel() }
        recordSubscription(at: path, live: gatt.sessions[path] != nil)
    }

    /// Sends StartNotify or StopNotify and feeds the outcome back to the session.
    private func notify(start: Bool, at path: ObjectPath) async {
        let member = start ? BlueZMethod.startNotify : BlueZMethod.stopNotify
        let outcome: Result<Void, BLEError>
        do throws(BLEError) {
            if start { try await follow(path) }
            if start || connectionState == .connected {
                _ = try await perform(
                    GattCall(path: path, interface: BlueZInterface.gattCharacteristic1, member: member, arguments: []))
            } else {
                // BlueZ keeps a subscription across link loss and arms it again at the next
                // link (Q7): a stop while the link is down goes to bluetoothd all the same,
                // outside the operation order, which turns operations away while disconnected.
                _ = try await session.call(path, BlueZInterface.gattCharacteristic1, member)
            }
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        if start {
            run(gatt.sessions[path]?.startFinished(outcome) ?? [], for: path)
        } else {
            run(gatt.sessions[path]?.stopFinished() ?? [], for: path)
        }
    }

    /// Has the bus send `path`'s property changes before its StartNotify goes out, so that its
    /// first values are not lost; kept until its notify session ends.
    private func follow(_ path: ObjectPath) async throws(BLEError) {
        guard followedCharacteristics[path] == nil else { return }
        let subscription = try await session.followCharacteristic(path)
        // The session may have ended, or another start followed it, while the rule was added.
        if gatt.sessions[path] == nil || followedCharacteristics[path] != nil {
            subscription.cancel()
        } else {
            followedCharacteristics[path] = subscription
        }
    }

    /// After a (re)connection: BlueZ re-arms subscriptions itself across link loss, but not
    /// after a bluetoothd restart, so StartNotify is sent again (it is idempotent per client).
    /// Waits until each is answered, so a reconnection reports done with its subscriptions in place.
    func rearmSubscriptions() async {
        for path in Array(gatt.sessions.keys) {
            guard let actions = gatt.sessions[path]?.restart(), !actions.isEmpty else { continue }
            await notify(start: true, at: path)
        }
    }

    /// Services changed: the notify sessions of vanished characteristics end; callers still
    /// waiting for their StartNotify learn why (`error`).
    func abandonNotifySession(_ path: ObjectPath, error: BLEError = .servicesChangedUnder) {
        followedCharacteristics.removeValue(forKey: path)?.cancel()
        guard var notifySession = gatt.sessions.removeValue(forKey: path) else { return }
        let waiters = notifySession.abandon()
        for waiter in waiters { waiter.resume(returning: .failure(error)) }
    }

    /// Whether the characteristic at `path` delivers notifications now: the link is up and
    /// BlueZ confirmed this central's subscription (or an AcquireNotify channel is open).
    func isNotifying(_ path: ObjectPath) -> Bool {
        connectionState == .connected && (gatt.sessions[path]?.phase == .running || gatt.acquired[path] != nil)
    }

    /// The bus went for good: every notification iteration of this peripheral ends (after the
    /// values it holds), and callers still waiting for a StartNotify fail.
    func endNotifications() {
        let paths = Set(gatt.characteristics.keys).union(gatt.sessions.keys).union(gatt.acquired.keys)
        for path in paths {
            for subscriber in client.removeSubscribers(of: path) { subscriber.buffer.finish() }
            gatt.acquired.removeValue(forKey: path)?.finish()
            abandonNotifySession(path, error: session.unavailable)
        }
    }
}
