import BlueZ
import DBus

extension Daemon {
    // MARK: Pair

    /// `Device1.Pair` as `pair_device` and `device_bonding_complete` (5.66) run it: the device
    /// becomes persistent, the caller's agent (else the default one, else none: NoInputNoOutput)
    /// and the peripheral's IO capability pick the method, the kernel opens the link if it is
    /// down, the agent is asked what the method needs, and the reply comes once bonded (after
    /// service resolution when the link was opened for it).
    func pairCall(_ call: DBusMessage, _ reply: MethodReply, _ path: ObjectPath) {
        core.state.withLock { state in
            guard isCurrent(state), var device = state.devices[path] else {
                return reply.fail(Self.error(BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist))
            }
            let wasStored = state.stored.contains(device.address)
            device.temporary = false
            state.stored.insert(device.address)
            // A pairing the peer started has no `bonding_req`: only a `Pair` makes one busy.
            let peerPairing = device.bonding?.requestedByPeer != nil
            guard device.bonding == nil || peerPairing else {
                state.devices[path] = device
                return reply.fail(Self.error(BlueZErrorName.inProgress, BlueZErrorMessage.inProgress))
            }
            guard !device.paired else {
                state.devices[path] = device
                return reply.fail(Self.error(BlueZErrorName.alreadyExists, BlueZErrorMessage.alreadyExists))
            }
            if peerPairing {
                state.devices[path] = device
                guard state.devices[path]?.bonding?.reply == nil else {
                    return reply.fail(Self.error(BlueZErrorName.inProgress, BlueZErrorMessage.inProgress))
                }
                // The kernel is pairing already: mgmt Pair Device completes with that pairing.
                state.devices[path]?.bonding?.reply = reply
                state.devices[path]?.bonding?.requester = call.sender
                return
            }
            let agent = state.agents.agent(for: call.sender)
            let peer = state.peripherals[device.address]?.definition
            let method = PairingMethod.select(
                initiator: agent?.capability ?? .noInputNoOutput,
                responder: peer?.pairing.ioCapability ?? .noInputNoOutput)
            state.nextBonding += 1
            let token = state.nextBonding
            device.bonding = Bonding(
                reply: reply, requester: call.sender, agent: agent, method: method, token: token, wasStored: wasStored)
            state.devices[path] = device
            guard state.adapters[device.adapterIndex].powered else {
                // mgmt Pair Device on a powered-off controller: MGMT_STATUS_NOT_POWERED.
                return finishBonding(&state, path, token, .failure(BlueZErrorName.authenticationFailed))
            }
            if device.connected { return startSMP(&state, path, token) }
            guard peer?.connectable == true else {
                return schedule(&state, after: options.connectTimeout) { daemon, state in
                    daemon.finishBonding(&state, path, token, .failure(BlueZErrorName.connectionAttemptFailed))
                }
            }
            schedule(&state, after: options.connectDelay) { daemon, state in
                daemon.pairingLinkUp(&state, path, token)
            }
        }
    }

    /// The kernel's link for a Pair Device on a disconnected peripheral.
    private func pairingLinkUp(_ state: inout SimState, _ path: ObjectPath, _ token: Int) {
        guard var device = state.devices[path], device.bonding?.token == token else { return }
        guard state.adapters[device.adapterIndex].powered else {
            return finishBonding(&state, path, token, .failure(BlueZErrorName.connectionAttemptFailed))
        }
        if !device.connected {
            device.connected = true
            device.linkGeneration += 1
            device.bonding?.openedLink = true
            state.devices[path] = device
            state.statistics.connections += 1
            emit(path, BlueZInterface.device1, set: [("Connected", .boolean(true))])
        }
        startSMP(&state, path, token)
    }

    /// SMP on an up link: the peripheral's refusal, the method's user step, then key exchange.
    func startSMP(_ state: inout SimState, _ path: ObjectPath, _ token: Int) {
        guard let device = state.devices[path], let bonding = device.bonding, bonding.token == token else { return }
        let pairing = state.peripherals[device.address]?.definition.pairing ?? SimulatedPairing()
        if pairing.rejects {
            return schedule(&state, after: options.pairingDelay) { daemon, state in
                daemon.finishBonding(&state, path, token, .failure(BlueZErrorName.authenticationRejected))
            }
        }
        let peerWantsMITM = pairing.requiresAuthentication || bonding.requestedByPeer == .authenticated
        if bonding.method == .justWorks && peerWantsMITM {
            // The peer's MITM requirement cannot be met: SMP "Authentication Requirements".
            return schedule(&state, after: options.pairingDelay) { daemon, state in
                daemon.finishBonding(&state, path, token, .failure(BlueZErrorName.authenticationFailed))
            }
        }
        if bonding.method == .justWorks && bonding.requestedByPeer == nil {
            // Just Works under a `Pair` is accepted without asking anyone (`confirm_hint`
            // with `device->bonding` set, `device_confirm_passkey`).
            return schedule(&state, after: options.pairingDelay) { daemon, state in
                daemon.finishBonding(&state, path, token, .success)
            }
        }
        guard let agent = bonding.agent else {
            // `new_auth` finds no agent: the kernel's request gets a negative reply.
            return schedule(&state, after: options.pairingDelay) { daemon, state in
                daemon.finishBonding(&state, path, token, .failure(BlueZErrorName.authenticationFailed))
            }
        }
        switch bonding.method {
        case .passkeyDisplay:
            // The agent shows the passkey; the peripheral's user types it (`entered` counts keys).
            notify(agent, BlueZMethod.displayPasskey, [.objectPath(path), .uint32(pairing.passkey), .uint16(0)])
            schedule(&state, after: options.pairingDelay) { daemon, state in
                daemon.finishBonding(&state, path, token, .success)
            }
        case .passkeyEntry:
            ask(agent, BlueZMethod.requestPasskey, [.objectPath(path)], &state, path, token) { reply in
                guard case .uint32(let entered)? = reply.body.first, reply.body.count == 1 else { return false }
                return entered == pairing.passkey
            }
        case .numericComparison:
            ask(
                agent, BlueZMethod.requestConfirmation, [.objectPath(path), .uint32(pairing.passkey)], &state, path,
                token
            ) { reply in reply.body.isEmpty }
        case .justWorks:
            // Only a pairing the peer started gets here: `confirm_hint` without a bonding asks
            // the agent to authorize it (`agent_request_authorization`).
            ask(agent, BlueZMethod.requestAuthorization, [.objectPath(path)], &state, path, token) { reply in
                reply.body.isEmpty
            }
        }
    }

    /// Asks the agent and finishes the bonding by its answer: `accepts` judges a reply; an
    /// error reply fails authentication; no answer within ``SimulatorOptions/pairingTimeout``
    /// times it out (and the agent gets `Cancel`).
    ///
    /// The request is handed to the connection here, in order, as bluetoothd sends it from
    /// `agent_request_*` before its main loop runs anything else: sent from a task of its own,
    /// it could leave after a `CancelPairing` handled meanwhile, and the agent then saw the
    /// `Cancel` first and a request nobody would end (a loaded machine did that).
    private func ask(
        _ agent: AgentRegistry.Agent, _ member: MemberName, _ arguments: [DBusValue], _ state: inout SimState,
        _ path: ObjectPath, _ token: Int, accepts: @escaping @Sendable (DBusMessage) -> Bool
    ) {
        state.devices[path]?.bonding?.agentAsked = true
        let request = DBusMessage(
            kind: .methodCall, path: agent.path, interface: BlueZInterface.agent1, member: member,
            destination: agent.owner, body: arguments)
        connection.startCall(request, timeout: options.pairingTimeout) { [weak self] result in
            let outcome: BondingOutcome
            switch result {
            case .success(let reply):
                outcome = accepts(reply) ? .success : .failure(BlueZErrorName.authenticationFailed)
            case .failure(let error):
                // A daemon shut down meanwhile closed the connection: the answer finds it no
                // longer current.
                outcome = .failure(
                    error.code == .timeout ? BlueZErrorName.authenticationTimeout : BlueZErrorName.authenticationFailed)
            }
            // Not under the caller's lock: a closed connection reports at once, from here.
            let task = Task { [weak self] () -> Void in self?.agentAnswered(path, token, outcome) }
            self?.addTask(task)
        }
    }

    /// The agent's answer to the request of bonding `token`.
    private func agentAnswered(_ path: ObjectPath, _ token: Int, _ outcome: BondingOutcome) {
        core.state.withLock { state in
            guard isCurrent(state), state.devices[path]?.bonding?.token == token else { return }
            // Answered: no Cancel owed, except on a timeout (bluetoothd's `agent_cancel`).
            state.devices[path]?.bonding?.agentAsked = outcome == .failure(BlueZErrorName.authenticationTimeout)
            if outcome == .success {
                schedule(&state, after: options.pairingDelay) { daemon, state in
                    daemon.finishBonding(&state, path, token, .success)
                }
            } else {
                finishBonding(&state, path, token, outcome)
            }
        }
    }

    /// How a bonding ends: bonded, or the error name `new_authentication_return` gives.
    enum BondingOutcome: Sendable, Equatable {
        case success
        case failure(String)
    }

    /// Ends bonding `token`: keys stored, `Paired`/`Bonded` announced and the reply sent (after
    /// resolution on a link opened for it), or the error, the device temporary again and the
    /// link it opened dropped.
    func finishBonding(_ state: inout SimState, _ path: ObjectPath, _ token: Int, _ outcome: BondingOutcome) {
        guard var device = state.devices[path], let bonding = device.bonding, bonding.token == token else { return }
        // Requests held for this pairing are retried once the device is stored as it ends.
        defer { for waiter in bonding.waiting { waiter(self, &state, outcome == .success) } }
        guard outcome == .success else {
            let openedLink = bonding.openedLink
            if case .failure(let name) = outcome { abortBonding(&device, name, Self.message(for: name)) }
            if !bonding.wasStored && !device.paired {
                device.temporary = true
                state.stored.remove(device.address)
            }
            state.devices[path] = device
            if openedLink { linkDown(&state, path, reason: .authentication) }
            return
        }
        device.bonding = nil
        let wasPaired = device.paired
        device.paired = true
        device.bondSecurity = bonding.method.security
        state.bonds[device.address] = bonding.method.security
        guard let reply = bonding.reply, bonding.requestedByPeer == nil else {
            peerBondingComplete(&state, &device, announce: !wasPaired)
            bonding.reply?.succeed()
            return
        }
        state.devices[path] = device
        emit(path, BlueZInterface.device1, set: [("Paired", .boolean(true)), ("Bonded", .boolean(true))])
        guard bonding.openedLink, !device.servicesResolved else { return reply.succeed() }
        let generation = device.linkGeneration
        schedule(&state, after: options.resolveDelay) { daemon, state in
            daemon.resolve(&state, path, generation)
            reply.succeed()
        }
    }

    /// Fails a bonding in progress with `name`, sending the agent `Cancel` if it was asked.
    func abortBonding(_ device: inout DeviceState, _ name: String, _ message: String) {
        guard let bonding = device.bonding else { return }
        device.bonding = nil
        if bonding.agentAsked, let agent = bonding.agent { notify(agent, BlueZMethod.cancel) }
        bonding.reply?.fail(Self.error(name, message))
    }

    private static func message(for name: String) -> String {
        switch name {
        case BlueZErrorName.connectionAttemptFailed: BlueZErrorMessage.pageTimeout
        case BlueZErrorName.authenticationTimeout: BlueZErrorMessage.authenticationTimeout
        case BlueZErrorName.authenticationRejected: BlueZErrorMessage.authenticationRejected
        case BlueZErrorName.authenticationCanceled: BlueZErrorMessage.authenticationCanceled
        default: BlueZErrorMessage.authenticationFailed
        }
    }

    // MARK: CancelPairing

    /// A pending bonding ends with `AuthenticationCanceled` and the call succeeds; without one
    /// bluetoothd drops the keys and answers `DoesNotExist` (Q24).
    func cancelPairingCall(_ call: DBusMessage, _ reply: MethodReply, _ path: ObjectPath) {
        core.state.withLock { state in
            guard isCurrent(state), let device = state.devices[path] else {
                return reply.fail(Self.error(BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist))
            }
            // A pairing the peer started has no `bonding_req` to cancel: it goes on.
            if let bonding = device.bonding, bonding.requestedByPeer == nil {
                finishBonding(&state, path, bonding.token, .failure(BlueZErrorName.authenticationCanceled))
                return reply.succeed()
            }
            state.bonds[device.address] = nil
            if device.paired {
                state.devices[path]?.paired = false
                state.devices[path]?.bondSecurity = .none
                emit(path, BlueZInterface.device1, set: [("Paired", .boolean(false)), ("Bonded", .boolean(false))])
            }
            reply.fail(Self.error(BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist))
        }
    }

    // MARK: Clients leaving

    /// An agent's owner left: the agent goes (`agent_disconnect`). A `Pair` caller left: its
    /// bonding is cancelled and the link dropped (`create_bond_req_exit`).
    func pairingClientLeft(_ state: inout SimState, _ client: BusName) {
        let head = state.agents.defaultOwner
        state.agents.remove(client)
        if state.agents.defaultOwner != head { defaultAgentChanged(&state) }
        for path in state.devices.keys.sorted() {
            guard let bonding = state.devices[path]?.bonding, bonding.requester == client else { continue }
            finishBonding(&state, path, bonding.token, .failure(BlueZErrorName.authenticationCanceled))
            if state.devices[path]?.connected == true { linkDown(&state, path, reason: .local) }
        }
    }
}
