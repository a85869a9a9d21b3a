import BlueZ
import DBus
import Foundation

extension Daemon {
    /// Runs `action` under the state lock now (zero delay) or after `delay`, unless the daemon
    /// was replaced meanwhile.
    func schedule(
        _ state: inout SimState, after delay: Duration, _ action: @escaping @Sendable (Daemon, inout SimState) -> Void
    ) {
        if delay == .zero {
            action(self, &state)
            return
        }
        delayedActions.add(1, ordering: .relaxed)
        let task = Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard let self else { return }
            self.core.state.withLock { state in
                // Counted out under the lock, before the action sends anything: whoever got
                // its reply sees the count without it, and whoever sees the count without it
                // sees its effects once it takes the lock.
                self.delayedActions.subtract(1, ordering: .releasing)
                guard self.isCurrent(state) else { return }
                action(self, &state)
            }
        }
        addTask(task)
    }

    // MARK: Connect

    func connectCall(_ call: DBusMessage, _ reply: MethodReply, _ path: ObjectPath) {
        core.state.withLock { state in
            guard isCurrent(state), var device = state.devices[path] else {
                return reply.fail(Self.error(BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist))
            }
            guard state.adapters[device.adapterIndex].powered else {
                return reply.fail(Self.error(BlueZErrorName.failed, BlueZErrorMessage.leConnectionAbortByLocal))
            }
            if device.connected { return reply.succeed() }
            if !device.pendingConnects.isEmpty {
                return reply.fail(
                    profile.connectInProgressError
                        ? Self.error(BlueZErrorName.inProgress, BlueZErrorMessage.inProgress)
                        : Self.error(BlueZErrorName.failed, BlueZErrorMessage.operationAlreadyInProgress))
            }
            // Connect makes the device persistent, except for private random addresses (§3.7).
            if !device.address.isPrivate(addressType: AddressType(rawValue: addressType(of: device, state))) {
                device.temporary = false
                state.stored.insert(device.address)
            }
            device.pendingConnects.append(reply)
            device.linkGeneration += 1
            let generation = device.linkGeneration
            state.devices[path] = device
            let address = device.address.description
            let reachable = state.peripherals[device.address].map { $0.definition.connectable } ?? false
            var delay = options.connectDelay
            switch state.takeFault(.connect, address: address) {
            case .fail(let name, let message)?:
                schedule(&state, after: delay) { daemon, state in
                    daemon.failConnect(&state, path, generation, Self.error(name, message))
                }
                return
            case .attError?, .dropLink?:
                schedule(&state, after: delay) { daemon, state in
                    daemon.failConnect(
                        &state, path, generation,
                        Self.error(BlueZErrorName.failed, BlueZErrorMessage.leConnectionAbortByLocal))
                }
                return
            case .delay(let extra)?:
                delay += extra
            case .noReply?:
                return
            case nil:
                break
            }
            guard reachable else {
                schedule(&state, after: options.connectTimeout) { daemon, state in
                    daemon.failConnect(
                        &state, path, generation,
                        Self.error(BlueZErrorName.failed, BlueZErrorMessage.leConnectionAbortByLocal))
                }
                return
            }
            schedule(&state, after: delay) { daemon, state in daemon.linkUp(&state, path, generation) }
        }
    }

    private func addressType(of device: DeviceState, _ state: SimState) -> String {
        state.peripherals[device.address]?.definition.addressType ?? "public"
    }

    private func failConnect(_ state: inout SimState, _ path: ObjectPath, _ generation: Int, _ error: DBusError) {
        guard var device = state.devices[path], device.linkGeneration == generation else { return }
        let waiting = device.pendingConnects
        device.pendingConnects = []
        state.devices[path] = device
        for reply in waiting { reply.fail(error) }
    }

    /// The link is up: `Connected=true`, the Connect reply, then discovery (§3.4).
    private func linkUp(_ state: inout SimState, _ path: ObjectPath, _ generation: Int) {
        guard var device = state.devices[path], device.linkGeneration == generation, !device.pendingConnects.isEmpty
        else { return }
        let waiting = device.pendingConnects
        device.pendingConnects = []
        device.connected = true
        state.devices[path] = device
        state.statistics.connections += 1
        if state.silentConnects.remove(device.address) == nil {
            emit(path, BlueZInterface.device1, set: [("Connected", .boolean(true))])
        } else {
            let connected: [(String, DBusValue)] = [("Connected", .boolean(true))]
            try? connection.storeSilently(connected, interface: BlueZInterface.device1, path: path)
        }
        for reply in waiting { reply.succeed() }
        securityRequestAfterConnect(&state, path, generation)
        schedule(&state, after: options.resolveDelay) { daemon, state in daemon.resolve(&state, path, generation) }
    }

    /// GATT objects (first time only: the cache keeps them), MTU, then `ServicesResolved` with
    /// what the gap and deviceinfo plugins read.
    func resolve(_ state: inout SimState, _ path: ObjectPath, _ generation: Int) {
        guard var device = state.devices[path], device.linkGeneration == generation, device.connected,
            let record = state.peripherals[device.address]
        else { return }
        if device.gatt == nil {
            guard let layout = try? record.layout(devicePath: path, claimed: profile.claimedServiceUUIDs)
            else { return }
            device.gatt = layout
            exportGatt(layout, record, device: path)
        } else {
            // A change made while disconnected: a peer with Service Changed indicates it once
            // the link is back; without one the cache stays as it was.
            state.devices[path] = device
            servicesChanged(&state, path)
            device = state.devices[path] ?? device
        }
        device.servicesResolved = true
        state.devices[path] = device
        if state.stored.contains(device.address), let gatt = device.gatt {
            state.storedServices[device.address] = gatt.serviceUUIDs
        }
        if let gatt = device.gatt {
            for service in gatt.services {
                for characteristic in service.characteristics {
                    // MTU exists again, unannounced (see `characteristicInterface`).
                    emit(
                        characteristic.path, BlueZInterface.gattCharacteristic1,
                        set: [(GattCharacteristicProperties.Key.mtu, .uint16(record.definition.mtu))])
                }
            }
        }
        // UUIDs change only the first time (advertised → resolved); a cached reconnect
        // announces ServicesResolved alone (§13.2).
        var changes: [(String, DBusValue)] = []
        let uuids = DBusValue.array(.string, (device.gatt?.serviceUUIDs ?? []).map { .string($0) })
        if connection.property("UUIDs", interface: BlueZInterface.device1, path: path) != uuids {
            changes.append(("UUIDs", uuids))
        }
        changes.append(("ServicesResolved", .boolean(true)))
        if device.pendingPaired {
            // A pairing the peer asked for ended before resolution (`device_svc_resolved`).
            state.devices[path]?.pendingPaired = false
            changes.append(("Paired", .boolean(true)))
        }
        changes += readGenericAccess(&state, path)
        changes += readDeviceInformation(state, path)
        emit(path, BlueZInterface.device1, set: changes)
        attachBattery(&state, path)
        bridgedLinkUp(&state, path)
        // Subscriptions survive the link and re-arm on reconnection (Q7); one stored while
        // disconnected turns Notifying on once its CCC is written (Q8).
        for characteristic in device.notifySessions.keys.sorted() {
            setNotifying(true, characteristic)
            startTicker(&state, characteristic)
        }
    }

    // MARK: Disconnect

    func disconnectCall(_ call: DBusMessage, _ reply: MethodReply, _ path: ObjectPath) {
        core.state.withLock { state in
            guard isCurrent(state), var device = state.devices[path] else {
                return reply.fail(Self.error(BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist))
            }
            if !device.pendingConnects.isEmpty {
                // Disconnect cancels a pending Connect with br-connection-canceled, even for LE.
                let waiting = device.pendingConnects
                device.pendingConnects = []
                device.linkGeneration += 1
                state.devices[path] = device
                for pending in waiting {
                    pending.fail(Self.error(BlueZErrorName.failed, BlueZErrorMessage.bredrConnectionCanceled))
                }
            }
            guard device.connected else { return reply.succeed() }
            var delay = options.disconnectDelay
            switch state.takeFault(.disconnect, address: device.address.description) {
            case .fail(let name, let message)?: return reply.fail(Self.error(name, message))
            case .attError?: return reply.fail(Self.kernelRefused)
            case .noReply?: return hold(reply)
            case .dropLink?:
                // The peer went first: the link is lost, and the Disconnect has nothing left to do.
                linkDown(&state, path, reason: .timeout)
                return reply.succeed()
            case .delay(let extra)?: delay += extra
            case nil: break
            }
            let generation = device.linkGeneration
            state.devices[path]?.disconnecting = true
            schedule(&state, after: delay) { daemon, state in
                guard state.devices[path]?.linkGeneration == generation else { return reply.succeed() }
                daemon.linkDown(&state, path, reason: .local, answering: reply)
            }
        }
    }

    /// The link went down: `ServicesResolved=false`, (≥5.83) `Disconnected(reason)`,
    /// `Connected=false`; acquired channels hang up; GATT objects stay (`Cache=always`).
    /// `answering` is the local Disconnect that brought it down, answered where the release does.
    func linkDown(
        _ state: inout SimState, _ path: ObjectPath, reason: DisconnectReason, answering: MethodReply? = nil
    ) {
        guard var device = state.devices[path], device.connected else {
            answering?.succeed()
            return
        }
        // A pairing loses its link: MGMT_STATUS_DISCONNECTED.
        abortBonding(&device, BlueZErrorName.authenticationCanceled, BlueZErrorMessage.authenticationCanceled)
        device.connected = false
        device.disconnecting = false
        device.servicesResolved = false
        device.linkGeneration += 1
        device.writesInFlight.removeAll()
        for (characteristic, channel) in device.acquiredNotify {
            channel.hangUp()
            announceNotifyAcquired(false, characteristic)
        }
        for (characteristic, channel) in device.acquiredWrite {
            channel.hangUp()
            emit(characteristic, BlueZInterface.gattCharacteristic1, set: [("WriteAcquired", .boolean(false))])
        }
        device.acquiredNotify.removeAll()
        device.acquiredWrite.removeAll()
        // L2CAP channels run over the link: they go down with it.
        if state.adapters.indices.contains(device.adapterIndex) {
            core.l2cap.hangUp(adapter: state.adapters[device.adapterIndex].address, peer: device.address)
        }
        device.tickers.removeAll()
        // Unconfirmed and queued indications die with the link.
        device.indicationInFlight = false
        device.indicationQueue.removeAll()
        device.lastSeen = MonotonicNanos.now()
        state.devices[path] = device
        bridgedLinkDown(&state, device)
        detachBattery(&state, path)
        if let gatt = device.gatt {
            for service in gatt.services {
                for characteristic in service.characteristics {
                    // No GATT client, no MTU; nothing is announced (Q10).
                    emit(
                        characteristic.path, BlueZInterface.gattCharacteristic1,
                        remove: [GattCharacteristicProperties.Key.mtu])
                }
            }
        }
        // Requests in flight end with ATT error 0x0E (`disc_att_send_op`).
        for pending in device.pendingOperations.values { pending.fail(Self.linkLost) }
        for waiting in device.readsInFlight.values.flatMap(\.replies) { waiting.fail(Self.linkLost) }
        state.devices[path]?.pendingOperations.removeAll()
        state.devices[path]?.writeOrder.removeAll()
        state.devices[path]?.writesDue.removeAll()
        state.devices[path]?.readsInFlight.removeAll()
        if profile.disconnectedSignal {
            emit(path, BlueZInterface.device1, set: [("ServicesResolved", .boolean(false))])
            try? connection.emitSignal(
                path: path, interface: BlueZInterface.device1, member: BlueZSignal.disconnected,
                arguments: [.string(reason.name), .string(reason.message)])
            emit(path, BlueZInterface.device1, set: [("Connected", .boolean(false))])
            answering?.succeed()
        } else {
            // 5.66 (the real daemon's trace, Tests/RealBlueZTests/Traces): ServicesResolved
            // goes with the GATT client, then device_remove_connection answers the Disconnect
            // and announces Connected in a later main-loop turn.
            emit(path, BlueZInterface.device1, set: [("ServicesResolved", .boolean(false))])
            answering?.succeed()
            emit(path, BlueZInterface.device1, set: [("Connected", .boolean(false))])
        }
    }
}
