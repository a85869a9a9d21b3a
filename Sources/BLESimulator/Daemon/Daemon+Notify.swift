import BlueZ
import DBus
import Foundation
import Glibc

extension Daemon {
    // MARK: StartNotify / StopNotify

    func startNotify(_ call: DBusMessage, _ reply: MethodReply, _ target: GattTarget) {
        guard let sender = call.sender else { return reply.fail(Self.invalidArguments) }
        core.state.withLock { state in
            guard isCurrent(state), let device = state.devices[target.device] else {
                return reply.fail(Self.notConnected)
            }
            // Refused while a Disconnect is under way (`device_is_disconnecting`, Q23).
            if device.disconnecting {
                return reply.fail(Self.error(BlueZErrorName.notConnected, BlueZErrorMessage.notConnectedDefault))
            }
            guard target.notifies else {
                return reply.fail(Self.error(BlueZErrorName.notSupported, BlueZErrorMessage.notSupported))
            }
            if device.acquiredNotify[target.path] != nil {
                return reply.fail(Self.error(BlueZErrorName.notPermitted, BlueZErrorMessage.notifyAcquired))
            }
            // Same client again: fine once registered; while disconnected the session waits
            // for the next connection and a repeat is InProgress (Q8).
            if device.notifySessions[target.path]?.contains(sender) ?? false {
                return device.connected
                    ? reply.succeed() : reply.fail(Self.error(BlueZErrorName.inProgress, BlueZErrorMessage.inProgress))
            }
            if device.notifyPending[target.path]?.contains(sender) ?? false {
                return reply.fail(Self.error(BlueZErrorName.inProgress, BlueZErrorMessage.inProgress))
            }
            // Faults act on the CCC write, which only a connected device has.
            let fault =
                device.connected
                ? state.takeFault(.startNotify, address: device.address.description, characteristic: target.uuid)
                : nil
            guard let delay = applyGattFault(fault, reply, &state, device: target.device) else { return }
            if device.connected, device.notifySessions[target.path]?.isEmpty ?? true,
                let record = state.peripherals[device.address], let server = bridgedTarget(state, record, target)
            {
                return bridgedStartNotify(&state, server, target, sender, reply, delay: delay)
            }
            guard delay > .zero else { return addNotifySession(&state, reply, target, sender) }
            state.devices[target.device]?.notifyPending[target.path, default: []].insert(sender)
            let generation = device.linkGeneration
            return schedule(&state, after: delay) { daemon, state in
                state.devices[target.device]?.notifyPending[target.path]?.remove(sender)
                guard state.devices[target.device]?.linkGeneration == generation else {
                    return reply.fail(Self.linkLost)
                }
                daemon.addNotifySession(&state, reply, target, sender)
            }
        }
    }

    /// The CCC is written (or, disconnected, the session waits for the next connection, Q8).
    func addNotifySession(
        _ state: inout SimState, _ reply: MethodReply, _ target: GattTarget, _ sender: BusName
    ) {
        guard var device = state.devices[target.device] else { return reply.fail(Self.notConnected) }
        let first = device.notifySessions[target.path]?.isEmpty ?? true
        device.notifySessions[target.path, default: []].insert(sender)
        state.devices[target.device] = device
        guard device.connected else { return reply.succeed() }
        setNotifying(true, target.path)
        reply.succeed()
        if first { startTicker(&state, target.path) }
    }

    func stopNotify(_ call: DBusMessage, _ reply: MethodReply, _ target: GattTarget) {
        guard let sender = call.sender else { return reply.fail(Self.invalidArguments) }
        core.state.withLock { state in
            guard isCurrent(state), var device = state.devices[target.device] else {
                return reply.fail(Self.notConnected)
            }
            if let channel = device.acquiredNotify.removeValue(forKey: target.path) {
                channel.hangUp()
                state.devices[target.device] = device
                announceNotifyAcquired(false, target.path)
                bridgedRelease(&state, target)
                return reply.succeed()
            }
            guard device.notifySessions[target.path]?.remove(sender) != nil else {
                return reply.fail(Self.error(BlueZErrorName.failed, BlueZErrorMessage.noNotifySessionStarted))
            }
            let last = device.notifySessions[target.path]?.isEmpty ?? true
            if last { device.notifySessions[target.path] = nil }
            state.devices[target.device] = device
            if last { setNotifying(false, target.path) }
            if last, device.connected, let record = state.peripherals[device.address],
                let server = bridgedTarget(state, record, target)
            {
                bridgedStopNotify(&state, server, device)
            }
            reply.succeed()
        }
    }

    /// `Notifying` is announced only when it changes (`register_notify_cb`, `update_notifying`).
    func setNotifying(_ on: Bool, _ path: ObjectPath) {
        guard
            connection.property("Notifying", interface: BlueZInterface.gattCharacteristic1, path: path) != .boolean(on)
        else { return }
        emit(path, BlueZInterface.gattCharacteristic1, set: [("Notifying", .boolean(on))])
    }

    /// Announces `NotifyAcquired`. Without the `notify` flag the property does not exist (5.87
    /// still acquires indicate-only characteristics), and gdbus lists a changed property that
    /// does not exist as invalidated (§1.5).
    func announceNotifyAcquired(_ on: Bool, _ path: ObjectPath) {
        let interface = BlueZInterface.gattCharacteristic1
        if connection.property("NotifyAcquired", interface: interface, path: path) != nil {
            return emit(path, interface, set: [("NotifyAcquired", .boolean(on))])
        }
        try? connection.emitSignal(
            path: path, interface: .properties, member: BlueZSignal.propertiesChanged,
            arguments: [
                .string(interface.rawValue), .dictionary(key: .string, value: .variant, []),
                .array(.string, [.string("NotifyAcquired")]),
            ])
    }

    // MARK: AcquireNotify / AcquireWrite

    func acquireNotify(_ call: DBusMessage, _ reply: MethodReply, _ target: GattTarget) {
        guard let sender = call.sender else { return reply.fail(Self.invalidArguments) }
        core.state.withLock { state in
            guard isCurrent(state), let device = state.devices[target.device], device.connected,
                let record = state.peripherals[device.address]
            else { return reply.fail(Self.notConnected) }
            let allowed = target.flags.contains("notify") || (profile.acquireNotifyOnIndicate && target.notifies)
            guard allowed else {
                return reply.fail(Self.error(BlueZErrorName.notSupported, BlueZErrorMessage.notSupported))
            }
            if device.acquiredNotify[target.path] != nil {
                return reply.fail(Self.error(BlueZErrorName.notPermitted, BlueZErrorMessage.notifyAcquired))
            }
            if !(device.notifySessions[target.path]?.isEmpty ?? true) {
                return reply.fail(Self.error(BlueZErrorName.inProgress, BlueZErrorMessage.inProgress))
            }
            // The reply waits for the CCC write, where faults act.
            let fault = acquireFault(&state, reply, target, device.address)
            if case .answered = fault { return }
            if case .attError(let code) = fault {
                guard profile.acquireNotifyAnswersCCCErrors else { return hold(reply) }
                return reply.fail(ATTErrorMapping.clientError(forATTError: code))
            }
            let mtu = record.definition.mtu
            let grant: @Sendable (Daemon, inout SimState) -> Void = { daemon, state in
                guard var device = state.devices[target.device], device.connected,
                    device.acquiredNotify[target.path] == nil
                else { return reply.fail(Self.notConnected) }
                guard let (ours, theirs) = Self.socketPair() else {
                    return reply.fail(Self.error(BlueZErrorName.failed, BlueZErrorMessage.failedAllocateNotifySession))
                }
                device.acquiredNotify[target.path] = AcquiredChannel(descriptor: ours, owner: sender)
                state.devices[target.device] = device
                daemon.announceNotifyAcquired(true, target.path)
                reply.succeed([.unixFD(theirs), .uint16(mtu)])
                daemon.watchAcquiredNotify(ours, target: target)
                daemon.startTicker(&state, target.path)
            }
            let delay: Duration
            if case .later(let later) = fault { delay = later } else { delay = .zero }
            // A bridged peripheral's application hears the CCC write once the delay ran out.
            if let server = bridgedTarget(state, record, target) {
                return bridgedAcquireNotify(&state, server, device, reply, delay: delay, grant: grant)
            }
            if delay > .zero { return schedule(&state, after: delay, grant) }
            grant(self, &state)
        }
    }

    /// What an `acquire` fault does to an AcquireNotify or AcquireWrite.
    private enum AcquireFault {
        case none
        /// The call was answered (failed) or is held unanswered.
        case answered
        case later(Duration)
        case attError(UInt8)
    }

    private func acquireFault(
        _ state: inout SimState, _ reply: MethodReply, _ target: GattTarget, _ address: BluetoothAddress
    ) -> AcquireFault {
        switch state.takeFault(.acquire, address: address.description, characteristic: target.uuid) {
        case .fail(let name, let message)?: reply.fail(Self.error(name, message))
        case .attError(let code)?: return .attError(code)
        case .noReply?: hold(reply)
        case .dropLink?:
            linkDown(&state, target.device, reason: .timeout)
            reply.fail(Self.linkLost)
        case .delay(let delay)?: return .later(delay)
        case nil: return .none
        }
        return .answered
    }

    func acquireWrite(_ call: DBusMessage, _ reply: MethodReply, _ target: GattTarget) {
        guard let sender = call.sender else { return reply.fail(Self.invalidArguments) }
        core.state.withLock { state in
            guard isCurrent(state), let device = state.devices[target.device], device.connected,
                let record = state.peripherals[device.address]
            else { return reply.fail(Self.notConnected) }
            if target.claimed { return reply.fail(Self.notAuthorized) }
            guard target.flags.contains("write-without-response") else {
                return reply.fail(Self.error(BlueZErrorName.notSupported, BlueZErrorMessage.notSupported))
            }
            if device.acquiredWrite[target.path] != nil {
                return reply.fail(Self.error(BlueZErrorName.notPermitted, BlueZErrorMessage.writeAcquired))
            }
            // No peer exchange precedes the reply: an ATT error has nothing to act on.
            let fault = acquireFault(&state, reply, target, device.address)
            if case .answered = fault { return }
            if case .attError = fault { return reply.fail(Self.kernelRefused) }
            let mtu = record.definition.mtu
            let grant: @Sendable (Daemon, inout SimState) -> Void = { daemon, state in
                guard var device = state.devices[target.device], device.connected,
                    device.acquiredWrite[target.path] == nil
                else { return reply.fail(Self.notConnected) }
                guard let (ours, theirs) = Self.socketPair() else {
                    return reply.fail(Self.error(BlueZErrorName.failed, BlueZErrorMessage.failedToInitiateWrite))
                }
                device.acquiredWrite[target.path] = AcquiredChannel(descriptor: ours, owner: sender)
                state.devices[target.device] = device
                daemon.emit(target.path, target.interface, set: [("WriteAcquired", .boolean(true))])
                reply.succeed([.unixFD(theirs), .uint16(mtu)])
                daemon.readAcquiredWrites(ours, target: target, address: device.address)
            }
            if case .later(let delay) = fault { return schedule(&state, after: delay, grant) }
            grant(self, &state)
        }
    }

    /// A non-blocking SEQPACKET pair, as bluetoothd creates for Acquire*.
    static func socketPair() -> (ours: FileDescriptor, theirs: FileDescriptor)? {
        var fds: [Int32] = [-1, -1]
        let kind = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, kind, 0, &fds) == 0 else { return nil }
        let flags = fcntl(fds[0], F_GETFL)
        _ = fcntl(fds[0], F_SETFL, flags | O_NONBLOCK)
        return (FileDescriptor(owning: fds[0]), FileDescriptor(owning: fds[1]))
    }

    /// Each datagram the client writes becomes one Write Command; EOF releases the channel.
    func readAcquiredWrites(_ channel: FileDescriptor, target: GattTarget, address: BluetoothAddress) {
        let source = DispatchSource.makeReadSource(fileDescriptor: channel.rawValue, queue: Self.channelQueue)
        source.setEventHandler { [weak self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(channel.rawValue, &buffer, buffer.count)
                if count > 0 {
                    let value = Data(buffer[0..<count])
                    self?.core.state.withLock { state in
                        guard let self else { return }
                        if let device = state.devices[target.device], let record = state.peripherals[address],
                            let server = self.bridgedTarget(state, record, target)
                        {
                            return self.bridgedCommand(&state, server, device, value)
                        }
                        self.store(&state, address, target.key, value, offset: 0)
                        state.statistics.gattOperations += 1
                    }
                    continue
                }
                if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
                source.cancel()
                self?.releaseAcquiredWrite(target, channel)
                return
            }
        }
        Self.closeOnCancel(source, channel)
        source.resume()
    }

    /// The only place our end of an Acquire* socket is closed: after its dispatch source is
    /// cancelled. Elsewhere the channel is hung up (``AcquiredChannel/hangUp()``) and the source
    /// sees end-of-file; closing under a live source would leave it registered on a number that
    /// a later socket reuses, which then never sees an event.
    private static func closeOnCancel(_ source: any DispatchSourceRead, _ channel: FileDescriptor) {
        source.setCancelHandler { channel.close() }
    }

    static let channelQueue = DispatchQueue(label: "swift-ble.simulator.channels")

    /// bluetoothd watches the notify socket it hands out: the client closing its end releases
    /// the channel (`NotifyAcquired=false`) at once, not at the next notification.
    func watchAcquiredNotify(_ channel: FileDescriptor, target: GattTarget) {
        let source = DispatchSource.makeReadSource(fileDescriptor: channel.rawValue, queue: Self.channelQueue)
        source.setEventHandler { [weak self] in
            var buffer = [UInt8](repeating: 0, count: 512)
            while true {
                let count = read(channel.rawValue, &buffer, buffer.count)
                // Bytes written to a notify socket are ignored.
                if count > 0 { continue }
                if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
                source.cancel()
                self?.releaseAcquiredNotify(target, channel)
                return
            }
        }
        Self.closeOnCancel(source, channel)
        source.resume()
    }

    private func releaseAcquiredNotify(_ target: GattTarget, _ channel: FileDescriptor) {
        core.state.withLock { state in
            guard isCurrent(state), state.devices[target.device]?.acquiredNotify[target.path]?.descriptor === channel
            else { return }
            state.devices[target.device]?.acquiredNotify[target.path] = nil
            announceNotifyAcquired(false, target.path)
            bridgedRelease(&state, target)
        }
    }

    private func releaseAcquiredWrite(_ target: GattTarget, _ channel: FileDescriptor) {
        core.state.withLock { state in
            guard isCurrent(state), state.devices[target.device]?.acquiredWrite[target.path]?.descriptor === channel
            else { return }
            state.devices[target.device]?.acquiredWrite[target.path] = nil
            emit(target.path, target.interface, set: [("WriteAcquired", .boolean(false))])
        }
    }

    // MARK: Pushing values

    /// Sends one notification (or indication) of `value` from a characteristic to whoever
    /// listens: the AcquireNotify channel if any, else `PropertiesChanged(Value)` while
    /// someone has a notify session. Returns whether it went out.
    /// A notification or indication carries at most ATT MTU − 3 bytes (Core Vol 3, Part F,
    /// 3.4.7.1): a longer value is cut, and the client only ever sees the first bytes.
    /// An indication waits while another is unconfirmed on the link (then it counts as sent).
    @discardableResult
    func push(_ state: inout SimState, _ path: ObjectPath, _ fullValue: Data) -> Bool {
        guard let devicePath = Self.devicePath(of: path), var device = state.devices[devicePath], device.connected
        else { return false }
        let paced = options.indicationConfirmDelay > .zero && Self.indicates(device, path)
        if paced {
            guard !device.indicationInFlight else {
                state.devices[devicePath]?.indicationQueue.append((path, fullValue))
                return true
            }
            device.indicationInFlight = true
            state.devices[devicePath]?.indicationInFlight = true
            let generation = device.linkGeneration
            schedule(&state, after: options.indicationConfirmDelay) { daemon, state in
                daemon.indicationConfirmed(&state, devicePath, generation: generation)
            }
        }
        let mtu = Int(state.peripherals[device.address]?.definition.mtu ?? 23)
        let value = fullValue.count > mtu - 3 ? Data(fullValue.prefix(max(0, mtu - 3))) : fullValue
        if let channel = device.acquiredNotify[path] {
            let sent = value.withUnsafeBytes {
                send(channel.descriptor.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno != EAGAIN {
                channel.hangUp()
                device.acquiredNotify[path] = nil
                state.devices[devicePath] = device
                announceNotifyAcquired(false, path)
                return false
            }
            if sent >= 0 { countDelivery(&state, device, path) }
            return sent >= 0
        }
        // The battery plugin's own subscription hears it whatever D-Bus clients do.
        let plugin = device.batteryLevel == path
        if plugin { batteryNotified(device, path, value) }
        guard !(device.notifySessions[path]?.isEmpty ?? true) else {
            if plugin { countDelivery(&state, device, path) }
            return plugin
        }
        emitValue(value, path, BlueZInterface.gattCharacteristic1)
        countDelivery(&state, device, path)
        return true
    }

    /// A characteristic that indicates and does not notify gets its CCC written with 0x0002
    /// (`bt_gatt_client_register_notify`), so the peer indicates; bluetoothd confirms every
    /// indication it receives (`notify_cb` → `bt_att_send` of a confirmation), which is counted.
    /// Paced indications are counted when their confirmation is due (`indicationConfirmed`).
    private func countDelivery(_ state: inout SimState, _ device: DeviceState, _ path: ObjectPath) {
        state.statistics.notificationsSent += 1
        if options.indicationConfirmDelay == .zero && Self.indicates(device, path) {
            state.statistics.indicationsConfirmed += 1
        }
    }

    /// The confirmation reached the peer: it sends the next indication it held back, if any
    /// (one that finds nobody listening any more is dropped, and the next one tried).
    private func indicationConfirmed(_ state: inout SimState, _ devicePath: ObjectPath, generation: Int) {
        guard let device = state.devices[devicePath], device.linkGeneration == generation, device.indicationInFlight
        else { return }
        state.statistics.indicationsConfirmed += 1
        state.devices[devicePath]?.indicationInFlight = false
        while var queue = state.devices[devicePath]?.indicationQueue, !queue.isEmpty {
            let next = queue.removeFirst()
            state.devices[devicePath]?.indicationQueue = queue
            if push(&state, next.path, next.value) { return }
        }
    }

    /// Whether values of this characteristic travel as indications.
    static func indicates(_ device: DeviceState, _ path: ObjectPath) -> Bool {
        guard let gatt = device.gatt else { return false }
        for service in gatt.services where path.isDescendant(of: service.path) {
            for characteristic in service.characteristics where characteristic.path == path {
                return characteristic.flags.contains("indicate") && !characteristic.flags.contains("notify")
            }
        }
        return false
    }

    /// `/org/bluez/hciN/dev_X` from any path below it.
    static func devicePath(of path: ObjectPath) -> ObjectPath? {
        var candidate: ObjectPath? = path
        while let current = candidate {
            if current.elements.count == 4 { return current }
            candidate = current.parent
        }
        return nil
    }

    /// Periodic notifications of characteristics with `notifyIntervalMs`, while subscribed
    /// (a notify session or an AcquireNotify channel) and connected.
    func startTicker(_ state: inout SimState, _ path: ObjectPath) {
        guard let devicePath = Self.devicePath(of: path), let device = state.devices[devicePath],
            let record = state.peripherals[device.address], let layout = device.gatt
        else { return }
        var found: (ValueKey, VirtualCharacteristic)?
        for service in layout.services {
            for (c, characteristic) in service.characteristics.enumerated() where characteristic.path == path {
                found = (ValueKey(service: service.index, characteristic: c), characteristic.definition)
            }
        }
        guard let (key, definition) = found, let interval = definition.notifyIntervalMs, interval > 0 else { return }
        // One ticker per characteristic and link, however many subscribers start it.
        guard state.devices[devicePath]?.tickers.insert(path).inserted == true else { return }
        let generation = device.linkGeneration
        let address = record.definition.address
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(interval))
                guard let self else { return }
                let keepGoing = self.core.state.withLock { state -> Bool in
                    guard self.isCurrent(state), let device = state.devices[devicePath],
                        device.linkGeneration == generation, device.connected,
                        device.acquiredNotify[path] != nil || !(device.notifySessions[path]?.isEmpty ?? true)
                            || device.batteryLevel == path,
                        var record = state.peripherals[device.address]
                    else {
                        if state.devices[devicePath]?.linkGeneration == generation {
                            state.devices[devicePath]?.tickers.remove(path)
                        }
                        return false
                    }
                    var value = record.values[key] ?? Data()
                    if !definition.notifyValues.isEmpty {
                        let cursor = record.notifyCursor[key, default: 0]
                        value = definition.notifyValues[cursor % definition.notifyValues.count].data
                        record.notifyCursor[key] = cursor + 1
                        record.values[key] = value
                        state.peripherals[device.address] = record
                    }
                    self.push(&state, path, value)
                    return true
                }
                if !keepGoing { return }
            }
            _ = address
        }
        addTask(task)
    }
}
