import BlueZ
import DBus
import Foundation

/// The central side of a bridge (see `Daemon+AdapterBridge.swift`): GATT calls on a device
/// object of a bridged peripheral go to the applications registered on the peripheral's
/// adapter, and their notifications come back to the device objects.
extension Daemon {
    // MARK: Reads and writes

    /// `ReadValue` on a bridged attribute: the application answers, the value is announced
    /// as bluetoothd announces a read's cached value, then returned. Faults act as on a
    /// virtual peripheral's read; a delay holds the request before it reaches the application.
    func bridgedRead(
        _ state: inout SimState, _ server: ServerTarget, _ device: DeviceState, _ target: GattTarget, offset: UInt16,
        _ reply: MethodReply
    ) {
        let fault = state.takeFault(.read, address: device.address.description, characteristic: target.uuid)
        guard let delay = applyGattFault(fault, reply, &state, device: device.path) else { return }
        let ticket = holdForDelay(&state, device.path, reply, delay)
        let central = centralAddress(state, device)
        let generation = device.linkGeneration
        inOrder(&state, device.path) { [weak self] in
            guard let self, await self.waitOut(delay, ticket, device: device.path) else { return }
            let value: Data
            do throws(RemoteCentralError) {
                let request = try ServerRequestOptions(
                    central: central, adapter: server.adapterPath, offset: offset, mtu: Self.bridgeMTU)
                value = try await self.forwardRead(server, request)
            } catch {
                return reply.fail(Self.bridgeError(error))
            }
            self.core.state.withLock { state in
                guard self.isCurrent(state), state.devices[target.device]?.linkGeneration == generation else {
                    return reply.fail(Self.linkLost)
                }
                state.statistics.gattOperations += 1
                self.emitValue(value, target.path, target.interface)
                reply.succeed([.bytes(value)])
            }
        }
    }

    /// `WriteValue` on a bridged attribute: a request is answered once the application
    /// answered; a command at once, as bluetoothd answers once it sent the Write Command.
    /// Faults act as on a virtual peripheral's write; a delay holds the request (or the
    /// command and its answer) before it reaches the application.
    func bridgedWrite(
        _ state: inout SimState, _ server: ServerTarget, _ device: DeviceState, _ value: Data, offset: UInt16,
        command: Bool, _ reply: MethodReply
    ) {
        let uuid = server.descriptor?.uuid ?? server.characteristic.uuid
        let fault = state.takeFault(.write, address: device.address.description, characteristic: uuid)
        guard let delay = applyGattFault(fault, reply, &state, device: device.path) else { return }
        let ticket = holdForDelay(&state, device.path, reply, delay)
        if command && ticket == nil {
            reply.succeed()
            return bridgedCommand(&state, server, device, value)
        }
        let central = centralAddress(state, device)
        inOrder(&state, device.path) { [weak self] in
            guard let self, await self.waitOut(delay, ticket, device: device.path) else { return }
            if command {
                reply.succeed()
                return await self.forwardCommand(server, central: central, value)
            }
            do throws(RemoteCentralError) {
                let request = try ServerRequestOptions(
                    central: central, adapter: server.adapterPath, offset: offset, mtu: Self.bridgeMTU)
                try await self.forwardWrite(value, server, request, type: .request)
            } catch {
                return reply.fail(Self.bridgeError(error))
            }
            self.core.state.withLock { state in state.statistics.gattOperations += 1 }
            reply.succeed()
        }
    }

    /// A Write Command (`WriteValue` of type command, or a datagram on an `AcquireWrite`
    /// channel): nobody waits for it, and a refusal is dropped silently.
    func bridgedCommand(_ state: inout SimState, _ server: ServerTarget, _ device: DeviceState, _ value: Data) {
        let central = centralAddress(state, device)
        inOrder(&state, device.path) { [weak self] in await self?.forwardCommand(server, central: central, value) }
    }

    private func forwardCommand(_ server: ServerTarget, central: String, _ value: Data) async {
        do throws(RemoteCentralError) {
            let request = try ServerRequestOptions(central: central, adapter: server.adapterPath, mtu: Self.bridgeMTU)
            try await forwardWrite(value, server, request, type: .command)
        } catch {
            return
        }
        core.state.withLock { state in state.statistics.gattOperations += 1 }
    }

    // MARK: Delay faults

    /// Holds `reply` as a request in flight while a delay fault runs (as a virtual
    /// peripheral's delayed request is held), so that link loss fails it meanwhile. Returns
    /// the ticket ``waitOut(_:_:device:)`` redeems; nil without a delay.
    private func holdForDelay(
        _ state: inout SimState, _ device: ObjectPath, _ reply: MethodReply, _ delay: Duration
    ) -> Int? {
        guard delay > .zero, let id = state.devices[device]?.nextOperation else { return nil }
        state.devices[device]?.nextOperation = id + 1
        state.devices[device]?.pendingOperations[id] = reply
        return id
    }

    /// Waits out a delay fault's `delay`; false when the request was answered meanwhile (the
    /// link went and failed it) or the daemon was replaced, so it must not be forwarded.
    private func waitOut(_ delay: Duration, _ ticket: Int?, device: ObjectPath) async -> Bool {
        guard let ticket else { return true }
        try? await Task.sleep(for: delay)
        return core.state.withLock { state in
            isCurrent(state) && state.devices[device]?.pendingOperations.removeValue(forKey: ticket) != nil
        }
    }

    /// What the central's stack answers for a request the peripheral's side refused.
    private static func bridgeError(_ error: RemoteCentralError) -> DBusError {
        guard let code = error.attError else { return linkLost }
        return ATTErrorMapping.clientError(forATTError: code)
    }

    // MARK: Subscriptions

    /// The CCC write of a first `StartNotify`: the application is told (StartNotify or
    /// AcquireNotify), then the session is added and the call answered; a CCC value the
    /// flags refuse fails the call with the peripheral's ATT error.
    func bridgedStartNotify(
        _ state: inout SimState, _ server: ServerTarget, _ target: GattTarget, _ sender: BusName, _ reply: MethodReply,
        delay: Duration = .zero
    ) {
        guard let device = state.devices[target.device] else { return reply.fail(Self.notConnected) }
        let central = centralAddress(state, device)
        let generation = device.linkGeneration
        state.devices[target.device]?.notifyPending[target.path, default: []].insert(sender)
        let ticket = holdForDelay(&state, target.device, reply, delay)
        inOrder(&state, target.device) { [weak self] in
            guard let self else { return }
            guard await self.waitOut(delay, ticket, device: target.device) else {
                self.core.state.withLock { state in
                    _ = state.devices[target.device]?.notifyPending[target.path]?.remove(sender)
                }
                return
            }
            var failure: DBusError?
            do throws(RemoteCentralError) {
                try await self.subscribeBridged(server, central: central)
            } catch {
                failure = Self.bridgeError(error)
            }
            self.core.state.withLock { state in
                state.devices[target.device]?.notifyPending[target.path]?.remove(sender)
                guard self.isCurrent(state), state.devices[target.device]?.linkGeneration == generation else {
                    return reply.fail(Self.linkLost)
                }
                if let failure { return reply.fail(failure) }
                self.addNotifySession(&state, reply, target, sender)
            }
        }
    }

    /// `AcquireNotify` on a bridged characteristic: the CCC write reaches the application
    /// first, then the channel is granted (`grant`, under the state lock).
    func bridgedAcquireNotify(
        _ state: inout SimState, _ server: ServerTarget, _ device: DeviceState, _ reply: MethodReply,
        delay: Duration = .zero, grant: @escaping @Sendable (Daemon, inout SimState) -> Void
    ) {
        let central = centralAddress(state, device)
        let ticket = holdForDelay(&state, device.path, reply, delay)
        inOrder(&state, device.path) { [weak self] in
            guard let self, await self.waitOut(delay, ticket, device: device.path) else { return }
            do throws(RemoteCentralError) {
                try await self.subscribeBridged(server, central: central)
            } catch {
                return reply.fail(Self.bridgeError(error))
            }
            self.core.state.withLock { state in
                guard self.isCurrent(state) else { return reply.fail(Self.notConnected) }
                grant(self, &state)
            }
        }
    }

    /// A CCC write of 0: the last session of a bridged characteristic went.
    func bridgedStopNotify(_ state: inout SimState, _ server: ServerTarget, _ device: DeviceState) {
        let central = centralAddress(state, device)
        inOrder(&state, device.path) { [weak self] in try? await self?.unsubscribe(server, central: central) }
    }

    /// A released `AcquireNotify` channel of a connected device: the CCC write of 0.
    func bridgedRelease(_ state: inout SimState, _ target: GattTarget) {
        guard let device = state.devices[target.device], device.connected,
            let record = state.peripherals[device.address], let server = bridgedTarget(state, record, target)
        else { return }
        bridgedStopNotify(&state, server, device)
    }

    /// The link came up again: bluetoothd writes the CCCs of the sessions it kept (Q7).
    func bridgedLinkUp(_ state: inout SimState, _ path: ObjectPath) {
        guard let device = state.devices[path], let record = state.peripherals[device.address], record.servedBy != nil,
            let gatt = device.gatt
        else { return }
        var servers: [ServerTarget] = []
        for (s, service) in gatt.services.enumerated() {
            for (c, characteristic) in service.characteristics.enumerated()
            where !(device.notifySessions[characteristic.path]?.isEmpty ?? true) {
                let target = GattTarget(
                    device: path, path: characteristic.path, key: ValueKey(service: s, characteristic: c),
                    uuid: characteristic.uuid, flags: characteristic.flags)
                if let server = bridgedTarget(state, record, target) { servers.append(server) }
            }
        }
        guard !servers.isEmpty else { return }
        let central = centralAddress(state, device)
        inOrder(&state, path) { [weak self, servers] in
            for server in servers { try? await self?.subscribeBridged(server, central: central) }
        }
    }

    /// The link went down: the peripheral's bluetoothd forgets the CCC state of an unpaired
    /// central (see ``Simulator/remoteDisconnect(central:)``).
    func bridgedLinkDown(_ state: inout SimState, _ device: DeviceState) {
        guard let index = state.peripherals[device.address]?.servedBy else { return }
        let central = centralAddress(state, device)
        inOrder(&state, device.path) { [weak self] in
            guard let self else { return }
            for server in self.subscriptions(of: central) where server.key.adapter == index {
                try? await self.unsubscribe(server, central: central)
            }
        }
    }

    /// Runs `work` after every earlier forwarded operation of the device has finished: ATT
    /// carries a link's requests and commands one after another, in order.
    private func inOrder(_ state: inout SimState, _ device: ObjectPath, _ work: @escaping @Sendable () async -> Void) {
        let previous = state.devices[device]?.bridgeTail
        let task = Task {
            await previous?.value
            await work()
        }
        state.devices[device]?.bridgeTail = task
        addTask(task)
    }

    /// The central's CCC write, as the peripheral's bluetoothd receives it.
    private func subscribeBridged(_ server: ServerTarget, central: String) async throws(RemoteCentralError) {
        let request = try ServerRequestOptions(central: central, adapter: server.adapterPath, mtu: Self.bridgeMTU)
        // A characteristic that notifies is subscribed for notifications, else for indications
        // (`bt_gatt_client_register_notify`).
        try await subscribe(server, central: central, indications: nil, request: request)
    }

    // MARK: Notifications

    /// A registered application on adapter `index` notified or indicated: the value reaches
    /// every other adapter's device object of the bridged peripheral that has a session.
    func bridgedNotification(_ state: inout SimState, adapter index: Int, characteristic uuid: String, _ value: Data) {
        guard state.adapters.indices.contains(index) else { return }
        let address = state.adapters[index].address
        guard state.peripherals[address]?.servedBy == index else { return }
        _ = broadcast(&state, address: address, characteristic: uuid, value: value)
    }
}
