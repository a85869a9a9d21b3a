import BlueZ
import DBus
import Foundation

extension Daemon {
    /// The client-side options dict: keys compared case-insensitively, `offset` must be `q`,
    /// `type` must be `s` (bluez-dbus-api.md §4.4).
    struct GattOptions {
        var offset: UInt16 = 0
        var type: String?

        init(_ value: DBusValue?) throws(DBusError) {
            guard case .dictionary(_, _, let entries)? = value else { return }
            for entry in entries {
                guard case .string(let key) = entry.key else { continue }
                switch (key.lowercased(), entry.value.unwrappingVariant) {
                case ("offset", .uint16(let offset)): self.offset = offset
                case ("offset", _): throw Daemon.invalidArguments
                case ("type", .string(let type)): self.type = type.lowercased()
                case ("type", _): throw Daemon.invalidArguments
                default: continue
                }
            }
        }
    }

    static let invalidArguments = error(BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidArguments)
    static let notConnected = error(BlueZErrorName.failed, BlueZErrorMessage.notConnected)
    static let linkLost = error(BlueZErrorName.failed, BlueZErrorMessage.attError(0x0e))
    /// A write to a claimed service, exported read-only (≥ 5.80).
    static let notAuthorized = error(BlueZErrorName.notAuthorized, BlueZErrorMessage.notAuthorized)

    /// The device state and peripheral record a GATT call needs, or the error to answer.
    private func connectedDevice(_ state: SimState, _ target: GattTarget) -> Result<
        (DeviceState, PeripheralRecord), DBusError
    > {
        guard let device = state.devices[target.device], device.connected, device.gatt != nil,
            let record = state.peripherals[device.address]
        else { return .failure(Self.notConnected) }
        return .success((device, record))
    }

    // MARK: Read

    /// Answered on the I/O thread from the call as received: the common read (connected, no
    /// fault, nothing to raise) returns its value at once; every other holds a reply.
    func readValue(_ call: borrowing ReceivedCall, _ target: GattTarget) -> DirectAnswer {
        let options: GattOptions
        do throws(DBusError) {
            // An empty options dict, the usual case, is not decoded at all.
            options = try call.firstArgumentIsEmpty ? GattOptions(nil) : GattOptions(call.arguments().first)
        } catch { return .error(error) }
        return core.state.withLock { state in
            // A daemon stopped since: the reply is dropped, which answers NoReply.
            guard isCurrent(state) else { return .later(call.answerLater()) }
            // Fields are read in place (`inPlace`): reads are the hottest path there is.
            guard let index = state.devices.index(forKey: target.device),
                let link = state.devices.inPlace(index, { Self.readableLink($0, target.path) }),
                let recordIndex = state.peripherals.index(forKey: link.address)
            else { return .error(Self.notConnected) }
            // A peripheral another simulated adapter's application serves: only then is the
            // record copied, so the ordinary read keeps its in-place lookups.
            if state.peripherals.inPlace(recordIndex, { $0.servedBy != nil }),
                let server = bridgedTarget(state, state.peripherals.values[recordIndex], target)
            {
                let reply = call.answerLater()
                bridgedRead(&state, server, state.devices.values[index], target, offset: options.offset, reply)
                return .later(reply)
            }
            // One read per attribute: the same offset shares its result, another is refused.
            if let pendingOffset = link.pendingOffset {
                guard pendingOffset == options.offset else {
                    return .error(Self.error(BlueZErrorName.inProgress, BlueZErrorMessage.inProgress))
                }
                let reply = call.answerLater()
                state.devices.values[index].readsInFlight[target.path]?.replies.append(reply)
                return .later(reply)
            }
            // Where the device and the record are, while nothing has added or removed either.
            var location: ReadLocation? = ReadLocation(device: index, record: recordIndex)
            // Made only when the answer cannot be given at once.
            var held: MethodReply?
            var delay: Duration?
            if let fault = state.takeFault(.read, address: link.address.description, characteristic: target.uuid) {
                location = nil
                let reply = call.answerLater()
                guard let faultDelay = applyGattFault(fault, reply, &state, device: target.device) else {
                    return .later(reply)
                }
                held = reply
                if faultDelay != .zero { delay = faultDelay }
            }
            if !target.isDescriptor,
                let refusal = state.peripherals.inPlace(recordIndex, { Self.readRefusal($0, target.key) })
            {
                switch refusal {
                case .attError(let code): return Self.fail(held, ATTErrorMapping.clientError(forATTError: code))
                case .needs(let needed):
                    location = nil
                    let generation = link.generation
                    let raise = raiseSecurity(&state, target.device, to: needed) { daemon, state, bonded in
                        daemon.retryRead(&state, target, generation: generation, bonded: bonded, needed: needed)
                    }
                    switch raise {
                    case .sufficient: break
                    case .refused(let code): return Self.fail(held, ATTErrorMapping.clientError(forATTError: code))
                    case .pairing:
                        // Held as a read in flight: a dropped link fails it, a second read joins it.
                        let reply = held ?? call.answerLater()
                        state.devices[target.device]?.readsInFlight[target.path] = PendingRead(
                            offset: options.offset, replies: [reply])
                        return .later(reply)
                    }
                    if let code = Self.definedReadError(state.peripherals[link.address]?.definition, target.key) {
                        return Self.fail(held, ATTErrorMapping.clientError(forATTError: code))
                    }
                }
            }
            guard let delay else {
                let result = readResult(
                    &state, target, offset: options.offset, generation: link.generation, at: location)
                guard let held else {
                    switch result {
                    case .success(let value): return .value(.bytes(value))
                    case .failure(let error): return .error(error)
                    }
                }
                Self.answer([held], with: result)
                return .later(held)
            }
            let reply = held ?? call.answerLater()
            state.devices[target.device]?.readsInFlight[target.path] = PendingRead(
                offset: options.offset, replies: [reply])
            schedule(&state, after: delay) { daemon, state in
                // Gone already: the link dropped and the reads were failed.
                guard let pending = state.devices[target.device]?.readsInFlight.removeValue(forKey: target.path)
                else { return }
                daemon.finishRead(
                    &state, target, offset: options.offset, replies: pending.replies, generation: link.generation)
            }
            return .later(reply)
        }
    }

    /// `error` as the answer: through `held` when a reply was made already, else directly.
    private static func fail(_ held: MethodReply?, _ error: DBusError) -> DirectAnswer {
        guard let held else { return .error(error) }
        held.fail(error)
        return .later(held)
    }

    /// The read retried once the pairing it waited for ended: served when it bonded (unless the
    /// peer has its own error for it), else the peer's security error again.
    private func retryRead(
        _ state: inout SimState, _ target: GattTarget, generation: Int, bonded: Bool, needed: AttributeSecurity
    ) {
        // Gone already: the link dropped and the reads were failed.
        guard let pending = state.devices[target.device]?.readsInFlight.removeValue(forKey: target.path) else { return }
        let address = state.devices[target.device]?.address
        let code =
            bonded
            ? address.flatMap { Self.definedReadError(state.peripherals[$0]?.definition, target.key) }
            : needed.missingError
        if let code {
            let error = ATTErrorMapping.clientError(forATTError: code)
            for waiting in pending.replies { waiting.fail(error) }
            return
        }
        finishRead(&state, target, offset: pending.offset, replies: pending.replies, generation: generation)
    }

    /// What a read needs of the device, when it is connected with its GATT tree resolved: the
    /// peer's address, the link's generation and the offset of a read of `attribute` in flight.
    private static func readableLink(
        _ device: borrowing DeviceState, _ attribute: ObjectPath
    ) -> (address: BluetoothAddress, generation: Int, pendingOffset: UInt16?)? {
        guard device.connected, device.gatt != nil else { return nil }
        // Usually none: then the attribute's path is not even hashed.
        let pending = device.readsInFlight.isEmpty ? nil : device.readsInFlight[attribute]?.offset
        return (device.address, device.linkGeneration, pending)
    }

    /// Why the peer does not simply serve a read of a characteristic.
    private enum ReadRefusal {
        /// An ATT error, whatever the link.
        case attError(UInt8)
        /// More link security first (then, if raised, its own `readError` if any).
        case needs(AttributeSecurity)
    }

    /// bluetoothd sends the read whatever the Flags say; the peer refuses it when it is not
    /// readable, when the link lacks the security it demands, or with its scripted error.
    private static func readRefusal(_ record: borrowing PeripheralRecord, _ key: ValueKey) -> ReadRefusal? {
        let services = record.definition.services
        guard services.indices.contains(key.service),
            services[key.service].characteristics.indices.contains(key.characteristic)
        else { return nil }
        let flags = services[key.service].characteristics[key.characteristic].flags
        guard flags.contains("read") else { return .attError(0x02) }
        let needed = AttributeSecurity.required(by: flags, for: .read)
        if needed > .none { return .needs(needed) }
        return services[key.service].characteristics[key.characteristic].readError.map { .attError($0) }
    }

    private static func definedReadError(_ peripheral: VirtualPeripheral?, _ key: ValueKey) -> UInt8? {
        guard let services = peripheral?.services, services.indices.contains(key.service),
            services[key.service].characteristics.indices.contains(key.characteristic)
        else { return nil }
        return services[key.service].characteristics[key.characteristic].readError
    }

    /// Where a read found the device and the peripheral record, so that finishing it at once
    /// does not look them up again; valid only while neither table has gained or lost an entry.
    private struct ReadLocation {
        var device: Dictionary<ObjectPath, DeviceState>.Index
        var record: Dictionary<BluetoothAddress, PeripheralRecord>.Index
    }

    /// The peer's answer to a read reaches bluetoothd, which writes it into its cache at
    /// `offset` (emptied first for offset 0), announces the whole cached Value before the
    /// reply (trace §13.4), and answers from the cache (`chrc_read_cb` → `read_op_cb`).
    private func finishRead(
        _ state: inout SimState, _ target: GattTarget, offset: UInt16, replies: [MethodReply], generation: Int
    ) {
        Self.answer(replies, with: readResult(&state, target, offset: offset, generation: generation))
    }

    private static func answer(_ replies: [MethodReply], with result: Result<Data, DBusError>) {
        switch result {
        case .success(let value): for waiting in replies { waiting.succeed([.bytes(value)]) }
        case .failure(let error): for waiting in replies { waiting.fail(error) }
        }
    }

    /// ``finishRead(_:_:offset:replies:generation:)``'s answer, with the Value announced.
    private func readResult(
        _ state: inout SimState, _ target: GattTarget, offset: UInt16, generation: Int,
        at location: ReadLocation? = nil
    ) -> Result<Data, DBusError> {
        guard let index = location?.device ?? state.devices.index(forKey: target.device),
            state.devices.inPlace(index, { $0.linkGeneration }) == generation
        else { return .failure(Self.linkLost) }
        let value: Data
        if target.isCCC {
            value = currentValue(state, state.devices.values[index], record: nil, target)
        } else if let recordIndex = location?.record
            ?? state.peripherals.index(forKey: state.devices.inPlace(index, { $0.address }))
        {
            value = state.peripherals.inPlace(recordIndex, { $0.values[target.key] ?? Data() })
        } else {
            value = Data()
        }
        let offset = Int(offset)
        guard offset <= value.count else {
            return .failure(Self.error(BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidOffset))
        }
        // Offset 0 empties the cache first, so the cache becomes the value itself.
        var cached = value
        if offset > 0 {
            var old = Data()
            if case .bytes(let bytes)? = connection.property("Value", interface: target.interface, path: target.path) {
                old = bytes
            }
            cached = Self.cacheWrite(old, Data(value.dropFirst(offset)), at: offset)
        }
        state.statistics.gattOperations += 1
        emitValue(cached, target.path, target.interface)
        return .success(offset == 0 ? cached : Data(cached.dropFirst(offset)))
    }

    /// `gatt_db_attribute_write` on a cached value: grown (zero-filled) when the bytes do not
    /// fit, overwritten in place (keeping a longer old tail) when they do; nothing for no bytes.
    static func cacheWrite(_ old: Data, _ bytes: Data, at offset: Int) -> Data {
        guard !bytes.isEmpty else { return old }
        if offset < old.count && bytes.count <= old.count - offset {
            var value = old
            value.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
            return value
        }
        var value = Data(old.prefix(offset))
        if value.count < offset { value.append(Data(count: offset - value.count)) }
        return value + bytes
    }

    func currentValue(_ state: SimState, _ device: DeviceState, record: PeripheralRecord?, _ target: GattTarget) -> Data
    {
        if target.isCCC {
            // 0x0001 enables notifications, 0x0002 indications (used without `notify`).
            let characteristic = target.path.parent ?? .root
            let on =
                !(device.notifySessions[characteristic]?.isEmpty ?? true)
                || device.acquiredNotify[characteristic] != nil
            let flags =
                device.gatt?.services.lazy.flatMap(\.characteristics).first { $0.path == characteristic }?.flags ?? []
            return Data([on ? (flags.contains("notify") ? 0x01 : 0x02) : 0x00, 0x00])
        }
        return record?.values[target.key] ?? Data()
    }

    private func characteristicDefinition(_ record: PeripheralRecord, _ key: ValueKey) -> VirtualCharacteristic? {
        let services = record.definition.services
        guard services.indices.contains(key.service),
            services[key.service].characteristics.indices.contains(key.characteristic)
        else { return nil }
        return services[key.service].characteristics[key.characteristic]
    }

    /// Whether a request may go on at once, fails with an ATT error, or waits for a pairing.
    enum SecurityRaise {
        case sufficient
        case refused(UInt8)
        case pairing
    }

    /// What bluetoothd does when the peer answers Insufficient Encryption: it raises the link's
    /// security and retries the request once (`change_security` in `shared/att.c`). The kernel
    /// pairs as initiator without a `Pair` call, as for a peer's Security Request: Just Works
    /// over LE Secure Connections goes to user space with `confirm_hint` (Linux ≥ 5.8), and
    /// with no bonding under way bluetoothd asks the default agent (`RequestAuthorization`,
    /// `device_confirm_passkey`); no agent or a refusal fails the pairing, and the retried
    /// request gets the peer's error again. A pairing already under way (a `Pair`) is waited
    /// for. An authenticated key cannot come from this, so that need fails at once (0x05).
    /// `then` runs when a pairing started or joined here ends.
    func raiseSecurity(
        _ state: inout SimState, _ path: ObjectPath, to needed: AttributeSecurity, then waiter: @escaping BondingWaiter
    ) -> SecurityRaise {
        guard needed > .none, let device = state.devices[path], needed > device.bondSecurity else { return .sufficient }
        guard needed == .encrypted else { return .refused(needed.missingError) }
        guard device.bonding != nil || peerRequestsSecurity(&state, path, needed) else {
            return .refused(needed.missingError)
        }
        state.devices[path]?.bonding?.waiting.append(waiter)
        return .pairing
    }

    /// A reply kept unanswered on purpose (fault `noReply`): the client's timeout must fire.
    /// Acts on the fault outcomes GATT requests share: an error reply, an ATT error, no reply
    /// and a dropped link answer the request here (nil); a delay, or no fault, is returned for
    /// the request to go on after.
    func applyGattFault(
        _ fault: SimulatedFault.Action?, _ reply: MethodReply, _ state: inout SimState, device: ObjectPath
    ) -> Duration? {
        switch fault {
        case .fail(let name, let message)?: reply.fail(Self.error(name, message))
        case .attError(let code)?: reply.fail(ATTErrorMapping.clientError(forATTError: code))
        case .noReply?: hold(reply)
        case .dropLink?:
            linkDown(&state, device, reason: .timeout)
            reply.fail(Self.linkLost)
        case .delay(let delay)?: return delay
        case nil: return .zero
        }
        return nil
    }

    func hold(_ reply: MethodReply) {
        let task = Task {
            // Keeps the reply alive (unanswered) until the daemon stops.
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            withExtendedLifetime(reply) {}
        }
        addTask(task)
    }

    // MARK: Write

    func writeValue(_ call: DBusMessage, _ reply: MethodReply, _ target: GattTarget) {
        core.state.withLock { state in
            guard isCurrent(state) else { return }
            guard case .bytes(let value)? = call.body.first else { return reply.fail(Self.invalidArguments) }
            let options: GattOptions
            do throws(DBusError) { options = try GattOptions(call.body.count > 1 ? call.body[1] : nil) } catch {
                return reply.fail(error)
            }
            var device: DeviceState
            let record: PeripheralRecord
            switch connectedDevice(state, target) {
            case .failure(let error): return reply.fail(error)
            case .success(let found): (device, record) = found
            }
            if target.isCCC {
                return reply.fail(Self.error(BlueZErrorName.notPermitted, BlueZErrorMessage.writeNotPermitted))
            }
            if target.claimed { return reply.fail(Self.notAuthorized) }
            if device.acquiredWrite[target.path] != nil {
                return reply.fail(Self.error(BlueZErrorName.notPermitted, BlueZErrorMessage.writeAcquired))
            }
            if device.writesInFlight.contains(target.path) {
                return reply.fail(Self.error(BlueZErrorName.inProgress, BlueZErrorMessage.inProgress))
            }
            let mtu = Int(record.definition.mtu)
            let kind: String
            if target.isDescriptor {
                kind = "request"
            } else if let explicit = options.type {
                guard ["request", "command", "reliable"].contains(explicit) else {
                    return reply.fail(Self.error(BlueZErrorName.notSupported, BlueZErrorMessage.notSupported))
                }
                kind = explicit
            } else if target.flags.contains("reliable-write") {
                kind = "reliable"
            } else if target.flags.contains("write") {
                kind = "request"
            } else if target.flags.contains("write-without-response") {
                kind = "command"
            } else {
                return reply.fail(Self.error(BlueZErrorName.notSupported, BlueZErrorMessage.notSupported))
            }
            if kind == "command" {
                if options.offset != 0 {
                    return reply.fail(Self.error(BlueZErrorName.notSupported, BlueZErrorMessage.notSupported))
                }
                if value.count > mtu - 3 {
                    return reply.fail(Self.error(BlueZErrorName.failed, BlueZErrorMessage.failedToInitiateWrite))
                }
            }
            if Int(options.offset) + value.count > 512 {
                return reply.fail(Self.error(BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidLength))
            }
            if let server = bridgedTarget(state, record, target) {
                return bridgedWrite(
                    &state, server, device, value, offset: options.offset, command: kind == "command", reply)
            }
            let generation = device.linkGeneration
            let fault = state.takeFault(.write, address: device.address.description, characteristic: target.uuid)
            guard let delay = applyGattFault(fault, reply, &state, device: target.device) else { return }
            // bluetoothd sends an explicit type without looking at the Flags; the peripheral
            // refuses a request to an attribute it does not let anyone write (ATT 0x03) and
            // drops such a command silently, as it drops a command on a link without the
            // security the attribute needs (a command has no error response to raise it).
            var writable = Self.isWritable(target)
            if kind != "command" && !writable { return reply.fail(ATTErrorMapping.clientError(forATTError: 0x03)) }
            if !target.isDescriptor, let definition = characteristicDefinition(record, target.key) {
                let needed = AttributeSecurity.required(by: definition.flags, for: .write)
                if kind == "command" {
                    writable = writable && needed <= device.bondSecurity
                } else {
                    let id = device.nextOperation
                    let offset = options.offset
                    let raise = raiseSecurity(&state, target.device, to: needed) { daemon, state, bonded in
                        // Gone already: the link dropped and the request was failed.
                        guard state.devices[target.device]?.pendingOperations.removeValue(forKey: id) != nil else {
                            return
                        }
                        guard let code = bonded ? definition.writeError : needed.missingError else {
                            return daemon.finishWrite(
                                &state, target, value, offset: offset, stores: true, after: delay, reply,
                                generation: generation)
                        }
                        reply.fail(ATTErrorMapping.clientError(forATTError: code))
                    }
                    switch raise {
                    case .sufficient: break
                    case .refused(let code): return reply.fail(ATTErrorMapping.clientError(forATTError: code))
                    case .pairing:
                        // Held as a request in flight, so that link loss fails it first (`linkDown`).
                        state.devices[target.device]?.nextOperation = id + 1
                        state.devices[target.device]?.pendingOperations[id] = reply
                        return
                    }
                    if let code = definition.writeError {
                        return reply.fail(ATTErrorMapping.clientError(forATTError: code))
                    }
                }
            }
            finishWrite(
                &state, target, value, offset: options.offset, stores: writable, after: delay, reply,
                generation: generation, request: kind != "command")
        }
    }

    /// The peer takes the write (storing it if it lets centrals write there) after `delay`; a
    /// request counts as in flight meanwhile.
    private func finishWrite(
        _ state: inout SimState, _ target: GattTarget, _ value: Data, offset: UInt16, stores: Bool,
        after delay: Duration, _ reply: MethodReply, generation: Int, request: Bool = true
    ) {
        if request { state.devices[target.device]?.writesInFlight.insert(target.path) }
        inWriteOrder(&state, target.device, reply, after: delay) { daemon, state in
            state.devices[target.device]?.writesInFlight.remove(target.path)
            guard let current = state.devices[target.device], current.linkGeneration == generation else {
                return reply.fail(Self.linkLost)
            }
            if stores { daemon.store(&state, current.address, target.key, value, offset: Int(offset)) }
            state.statistics.gattOperations += 1
            reply.succeed()
        }
    }

    /// Whether the peripheral lets centrals write the attribute: a characteristic with some
    /// write property, a descriptor declared writable.
    static func isWritable(_ target: GattTarget) -> Bool {
        if target.isDescriptor { return target.flags.contains("write") }
        let writes: Set = ["write", "write-without-response", "reliable-write", "authenticated-signed-writes"]
        return !writes.isDisjoint(with: target.flags)
    }

    /// Writes land in the peripheral's database (a long write at `offset` splices).
    func store(_ state: inout SimState, _ address: BluetoothAddress, _ key: ValueKey, _ value: Data, offset: Int) {
        guard var record = state.peripherals[address] else { return }
        var current = record.values[key] ?? Data()
        if offset == 0 {
            current = value
        } else {
            if current.count < offset { current.append(Data(count: offset - current.count)) }
            current = current.prefix(offset) + value
        }
        record.values[key] = current
        state.peripherals[address] = record
    }
}
