import BlueZ
import DBus
import Foundation

extension Peripheral {
    // MARK: Discovery

    /// The peripheral's services (optionally only those with `uuids`), with their
    /// characteristics and descriptors, as BlueZ resolved them.
    public func discoverServices(_ uuids: [BluetoothUUID]? = nil) throws(BLEError) -> [Service] {
        guard connectionState == .connected else { throw BLEError(.notConnected, message: "not connected") }
        let tree = session.tree
        var services: [Service] = []
        for servicePath in tree.servicePaths(of: devicePath).sorted() {
            guard let properties = try? tree.service(at: servicePath) else { continue }
            let uuid = BluetoothUUID(properties.uuid)
            if let uuids, !uuids.contains(uuid) { continue }
            let included = (properties.includes ?? []).compactMap { path in
                (try? tree.service(at: path))?.map { BluetoothUUID($0.uuid) }
            }
            var characteristics: [Characteristic] = []
            for characteristicPath in tree.characteristicPaths(of: servicePath).sorted() {
                guard let character = try? tree.characteristic(at: characteristicPath) else { continue }
                characteristics.append(
                    characteristicObject(characteristicPath, character, serviceUUID: uuid, tree: tree))
            }
            services.append(
                Service(
                    uuid: uuid, isPrimary: properties.primary, handle: BlueZPath.serviceHandle(of: servicePath),
                    includedServices: included, characteristics: characteristics, path: servicePath))
        }
        gatt.stalePaths.removeAll()
        return services
    }

    /// The first characteristic `uuid` of the first service `service`.
    public func characteristic(_ uuid: BluetoothUUID, in service: BluetoothUUID) throws(BLEError) -> Characteristic {
        for candidate in try discoverServices([service]) {
            if let match = candidate.characteristics.first(where: { $0.uuid == uuid }) { return match }
        }
        throw BLEError(.notFound, message: "no characteristic \(uuid) in service \(service)")
    }

    private func characteristicObject(
        _ path: ObjectPath, _ properties: GattCharacteristicProperties, serviceUUID: BluetoothUUID,
        tree: BlueZObjectTree
    ) -> Characteristic {
        if let cached = gatt.characteristics[path]?.value { return cached }
        let descriptors = tree.descriptorPaths(of: path).sorted().compactMap { descriptorPath -> Descriptor? in
            guard let descriptor = try? tree.descriptor(at: descriptorPath) else { return nil }
            return Descriptor(
                uuid: BluetoothUUID(descriptor.uuid), handle: BlueZPath.descriptorHandle(of: descriptorPath),
                path: descriptorPath)
        }
        let created = Characteristic(
            uuid: BluetoothUUID(properties.uuid), serviceUUID: serviceUUID,
            properties: CharacteristicProperties(flags: properties.flags.strings),
            handle: properties.handle ?? BlueZPath.characteristicHandle(of: path), descriptors: descriptors,
            peripheral: self, path: path)
        gatt.characteristics[path] = WeakCharacteristic(value: created)
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
        for path in gatt.characteristics.keys
        where !tree.contains(path, implementing: BlueZInterface.gattCharacteristic1) {
            gatt.stalePaths.insert(path)
            if let stale = gatt.characteristics.removeValue(forKey: path)?.value {
                stale.validity.invalidate()
                invalidated = true
            }
            for subscriber in (gatt.subscribers.removeValue(forKey: path) ?? [:]).values {
                subscriber.continuation.finish()
            }
            gatt.acquired.removeValue(forKey: path)?.finish()
            gatt.notifying.remove(path)
        }
        return invalidated
    }

    // MARK: MTU

    /// The largest value one write of `type` carries: ATT MTU − 3 for writes without response
    /// (from BlueZ's `MTU` property; 20, the minimum, when BlueZ does not report it) and 512
    /// for writes with response (BlueZ does a long write).
    public func maximumWriteLength(for type: WriteType) -> Int {
        switch type {
        case .withResponse, .reliable: return 512
        case .withoutResponse:
            // BlueZ drops MTU silently at a disconnection and restores it silently, so a tree
            // read while disconnected often has none: look without decoding every characteristic.
            let tree = session.tree
            for service in tree.servicePaths(of: devicePath) {
                for path in tree.characteristicPaths(of: service) {
                    if let mtu = Self.mtu(of: path, in: tree) { return Int(mtu) - 3 }
                }
            }
            return 20
        }
    }

    /// The write-without-response limit for one characteristic: its own `MTU` (the link's) when
    /// BlueZ has it, read without decoding the object; else ``maximumWriteLength(for:)``, which
    /// walks the device's objects, too slow to do for every write.
    private func writeWithoutResponseLimit(_ path: ObjectPath) -> Int {
        if let mtu = Self.mtu(of: path, in: session.tree) { return Int(mtu) - 3 }
        return maximumWriteLength(for: .withoutResponse)
    }

    /// A characteristic's `MTU` property, when BlueZ reports a usable one.
    private static func mtu(of path: ObjectPath, in tree: BlueZObjectTree) -> UInt16? {
        guard case .uint16(let mtu)? = tree.objects[path]?[BlueZInterface.gattCharacteristic1]?["MTU"], mtu > 3
        else { return nil }
        return mtu
    }

    // MARK: The operation queue

    func acquireQueue() async {
        if !gatt.queueBusy {
            gatt.queueBusy = true
            return
        }
        let site = session.diagnostics.willSuspend()
        defer { session.diagnostics.didResume(site) }
        await withCheckedContinuation { continuation in
            // Checked again where the waiter is enqueued: should the continuation's set-up ever
            // leave the actor, a release in between must not leave this waiter behind.
            if gatt.queueBusy {
                gatt.queue.append(continuation)
            } else {
                gatt.queueBusy = true
                continuation.resume()
            }
        }
    }

    func releaseQueue() {
        if gatt.queue.isEmpty {
            gatt.queueBusy = false
        } else {
            gatt.queue.removeFirst().resume()
        }
    }

    /// Runs one call to bluetoothd, resolved by its reply, the link dropping, or cancellation.
    func guarded(
        _ call: @escaping @Sendable () async throws(BLEError) -> DBusMessage
    ) async -> Result<DBusMessage, BLEError> {
        let id = gatt.nextOperation
        gatt.nextOperation += 1
        let slot = OnceSlot<DBusMessage>(diagnostics: session.diagnostics)
        gatt.pending[id] = { error in slot.finish(.failure(error)) }
        let work = Task(executorPreference: session.connection.executor) {
            do throws(BLEError) { slot.finish(.success(try await call())) } catch { slot.finish(.failure(error)) }
        }
        let result = await withTaskCancellationHandler {
            await slot.wait()
        } onCancel: {
            slot.finish(.failure(.cancelledByTask))
            work.cancel()
        }
        gatt.pending[id] = nil
        return result
    }

    func failPendingOperations(_ error: BLEError) {
        let pending = gatt.pending.values
        gatt.pending.removeAll()
        for fail in pending { fail(error) }
        if let path = gatt.readInFlight {
            gatt.readInFlight = nil
            deliverHeld(path, gatt.heldValues)
            gatt.heldValues = []
        }
    }

    private func checkUsable(_ path: ObjectPath) throws(BLEError) {
        if Task.isCancelled { throw BLEError.cancelledByTask }
        guard connectionState == .connected else { throw BLEError(.notConnected, message: "not connected") }
        if gatt.stalePaths.contains(path) {
            throw BLEError(.servicesChanged, message: "the peripheral's services changed; discover them again")
        }
    }

    /// Calls a GATT method, retrying BlueZ's InProgress (another client's operation) until the deadline.
    private nonisolated func callRetryingInProgress(
        _ path: ObjectPath, _ interface: InterfaceName, _ member: MemberName, _ arguments: [DBusValue],
        timeout: Duration
    ) async throws(BLEError) -> DBusMessage {
        let deadline = ContinuousClock.now + timeout
        while true {
            // The retry pause may end past the deadline.
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw BLEError.timeout("\(member.rawValue)") }
            do {
                return try await session.call(path, interface, member, arguments, timeout: remaining)
            } catch  where error.code == .inProgress && ContinuousClock.now + .milliseconds(10) < deadline {
                try? await Task.sleep(for: .milliseconds(10))
                if Task.isCancelled { throw BLEError.cancelledByTask }
            }
        }
    }

    // MARK: Read and write

    func readValue(
        _ path: ObjectPath, offset: UInt16, timeout: Duration?, descriptor: Bool = false
    ) async throws(BLEError) -> Data {
        await acquireQueue()
        defer { releaseQueue() }
        try checkUsable(path)
        var options: [DBusDictionaryEntry] = []
        if offset > 0 { options.append(DBusDictionaryEntry(.string("offset"), .variant(.uint16(offset)))) }
        let arguments: [DBusValue] = [.dictionary(key: .string, value: .variant, options)]
        let interface = descriptor ? BlueZInterface.gattDescriptor1 : BlueZInterface.gattCharacteristic1
        let limit = timeout ?? operationTimeout
        if !descriptor {
            gatt.readInFlight = path
            gatt.heldValues = []
        }
        let result = await guarded { [self] () throws(BLEError) -> DBusMessage in
            try await self.callRetryingInProgress(path, interface, BlueZMethod.readValue, arguments, timeout: limit)
        }
        if !descriptor { finishRead(path, result) }
        let reply = try result.get()
        guard case .bytes(let value)? = reply.body.first else {
            throw BLEError(.protocolError, message: "ReadValue replied (\(reply.signature)), not (ay)")
        }
        return value
    }

    /// Drops the read's echo (`PropertiesChanged(Value)` sent just before the reply) and
    /// delivers the notifications held meanwhile.
    private func finishRead(_ path: ObjectPath, _ result: Result<DBusMessage, BLEError>) {
        guard gatt.readInFlight == path else { return }
        gatt.readInFlight = nil
        var held = gatt.heldValues
        gatt.heldValues = []
        if case .success(let reply) = result, case .bytes(let value)? = reply.body.first {
            if let echo = held.lastIndex(where: { $0.serial < reply.serial && $0.value == value }) {
                held.remove(at: echo)
            } else {
                gatt.expectedEchoes[path, default: []].append((reply.serial, value))
            }
        }
        deliverHeld(path, held)
    }

    private func deliverHeld(_ path: ObjectPath, _ held: [(serial: UInt32, value: Data)]) {
        for entry in held { deliver(path, entry.value) }
    }

    func writeValue(
        _ path: ObjectPath, _ value: Data, type: WriteType, timeout: Duration?, descriptor: Bool = false
    ) async throws(BLEError) {
        await acquireQueue()
        defer { releaseQueue() }
        try checkUsable(path)
        // 20 bytes fit every link (ATT's smallest MTU is 23): only longer values need the limit.
        if type == .withoutResponse && !descriptor && value.count > 20 {
            let limit = writeWithoutResponseLimit(path)
            guard value.count <= limit else {
                throw BLEError(
                    .invalidArguments,
                    message: "\(value.count) bytes exceed the \(limit)-byte limit of a write without response")
            }
        }
        var options: [DBusDictionaryEntry] = []
        if !descriptor { options.append(DBusDictionaryEntry(.string("type"), .variant(.string(type.blueZType)))) }
        let arguments: [DBusValue] = [.bytes(value), .dictionary(key: .string, value: .variant, options)]
        let interface = descriptor ? BlueZInterface.gattDescriptor1 : BlueZInterface.gattCharacteristic1
        let limit = timeout ?? operationTimeout
        let result = await guarded { [self] () throws(BLEError) -> DBusMessage in
            try await self.callRetryingInProgress(path, interface, BlueZMethod.writeValue, arguments, timeout: limit)
        }
        _ = try result.get()
    }

    // MARK: Notifications

    /// A `Value` change from BlueZ: a notification, an indication, or a read's echo.
    func valueChanged(_ path: ObjectPath, _ value: Data, serial: UInt32) {
        // The echo of a read answered earlier that arrived after its reply: bluetoothd sends
        // the echo before the reply, so it is the first signal older than the reply with the
        // read value (an equal notification just before it is indistinguishable, and
        // dropping that one instead delivers the same values). Replies older than this
        // signal expect nothing any more.
        if var expected = gatt.expectedEchoes[path] {
            expected.removeAll { $0.serial < serial }
            let isEcho = expected.first?.value == value
            if isEcho { expected.removeFirst() }
            gatt.expectedEchoes[path] = expected.isEmpty ? nil : expected
            if isEcho { return }
        }
        if gatt.readInFlight == path {
            gatt.heldValues.append((serial, value))
            return
        }
        deliver(path, value)
    }

    private func deliver(_ path: ObjectPath, _ value: Data) {
        guard let subscribers = gatt.subscribers[path] else { return }
        for subscriber in subscribers.values { subscriber.deliver(value) }
    }

    func addSubscriber(_ subscriber: NotificationSubscriber, to path: ObjectPath) async throws(BLEError) {
        // The Value route exists before StartNotify is sent, so the first values are kept.
        gatt.subscribers[path, default: [:]][subscriber.id] = subscriber
        do {
            try await ensureNotifying(path)
        } catch {
            gatt.subscribers[path]?[subscriber.id] = nil
            subscriber.continuation.finish()
            throw error
        }
    }

    func removeSubscriber(_ id: UInt64, from path: ObjectPath) async {
        guard gatt.subscribers[path]?.removeValue(forKey: id) != nil else { return }
        guard gatt.subscribers[path]?.isEmpty ?? true else { return }
        gatt.subscribers[path] = nil
        guard gatt.notifying.remove(path) != nil, connectionState == .connected else { return }
        await acquireQueue()
        defer { releaseQueue() }
        // A newcomer may have subscribed while we waited: then StopNotify would be wrong.
        guard gatt.subscribers[path] == nil else { return }
        _ = try? await session.call(path, BlueZInterface.gattCharacteristic1, BlueZMethod.stopNotify)
    }

    /// Sends StartNotify unless BlueZ already confirmed it.
    func ensureNotifying(_ path: ObjectPath) async throws(BLEError) {
        guard !gatt.notifying.contains(path) else { return }
        await acquireQueue()
        defer { releaseQueue() }
        guard !gatt.notifying.contains(path) else { return }
        try checkUsable(path)
        let limit = operationTimeout
        let result = await guarded { [self] () throws(BLEError) -> DBusMessage in
            try await self.callRetryingInProgress(
                path, BlueZInterface.gattCharacteristic1, BlueZMethod.startNotify, [], timeout: limit)
        }
        _ = try result.get()
        gatt.notifying.insert(path)
    }

    /// After a (re)connection: BlueZ re-arms subscriptions itself across link loss, but not
    /// after a bluetoothd restart, so StartNotify is sent again (it is idempotent per client).
    func rearmSubscriptions() async {
        let paths = Array(gatt.subscribers.keys)
        gatt.notifying.removeAll()
        for path in paths where !(gatt.subscribers[path]?.isEmpty ?? true) {
            try? await ensureNotifying(path)
        }
    }
}
