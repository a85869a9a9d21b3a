import BlueZ
import DBus

extension Daemon {
    /// A Security Request from the peripheral on the up link at `path`, as Linux (`smp.c`,
    /// `smp_cmd_security_req`) and bluetoothd 5.66 handle it. A bond with enough security only
    /// encrypts the link (`smp_ltk_encrypt`): nothing is announced. Otherwise the kernel pairs
    /// as initiator without a `Pair` call: the local IO capability is the default agent's
    /// (`set_io_cap`; none: NoInputNoOutput), the method comes from the table only when either
    /// side wants MITM, and bluetoothd asks the default agent (`agent_get(NULL)`), which for
    /// Just Works is `RequestAuthorization`: with LE Secure Connections the kernel of 5.66's era
    /// (6.1) hands every Just Works to user space with `confirm_hint`, and bluetoothd asks the
    /// agent when no bonding is under way. No agent (`new_auth` fails), or a refusal, fails the
    /// pairing; the kernel keeps the link. bluetoothd raising the link's security after an ATT
    /// error starts the same pairing (``raiseSecurity(_:_:to:then:)``). Returns whether a
    /// pairing started.
    @discardableResult
    func peerRequestsSecurity(_ state: inout SimState, _ path: ObjectPath, _ level: AttributeSecurity) -> Bool {
        guard var device = state.devices[path], device.connected, device.bonding == nil, level > .none,
            device.bondSecurity < level
        else { return false }
        let peer = state.peripherals[device.address]?.definition.pairing ?? SimulatedPairing()
        let agent = state.agents.agent(for: nil)
        let wantsMITM = level == .authenticated || peer.requiresAuthentication
        let method =
            wantsMITM
            ? PairingMethod.select(initiator: agent?.capability ?? .noInputNoOutput, responder: peer.ioCapability)
            : .justWorks
        state.nextBonding += 1
        let token = state.nextBonding
        device.bonding = Bonding(
            reply: nil, requester: nil, agent: agent, method: method, token: token, wasStored: false,
            requestedByPeer: level)
        state.devices[path] = device
        startSMP(&state, path, token)
        return true
    }

    /// The keys of a pairing the peripheral started are stored: `Bonded` at once with the LTK
    /// (`device_set_bonded`, which also makes the device persistent), then `Paired`
    /// (`device_set_paired`), held back until services are resolved. A device already paired
    /// (a stronger key replacing a weaker one) announces nothing.
    func peerBondingComplete(_ state: inout SimState, _ device: inout DeviceState, announce: Bool) {
        device.temporary = false
        state.stored.insert(device.address)
        device.pendingPaired = announce && !device.servicesResolved
        state.devices[device.path] = device
        guard announce else { return }
        var changes: [(String, DBusValue)] = [("Bonded", .boolean(true))]
        if !device.pendingPaired { changes.append(("Paired", .boolean(true))) }
        emit(device.path, BlueZInterface.device1, set: changes)
    }

    /// A peripheral that asks for security as soon as it is connected does so once the link is
    /// up (before services are resolved, as sensors send it right after the connection).
    func securityRequestAfterConnect(_ state: inout SimState, _ path: ObjectPath, _ generation: Int) {
        guard let device = state.devices[path],
            let level = state.peripherals[device.address]?.definition.pairing.requestsSecurity
        else { return }
        schedule(&state, after: options.pairingDelay) { daemon, state in
            guard state.devices[path]?.linkGeneration == generation else { return }
            daemon.peerRequestsSecurity(&state, path, AttributeSecurity(level))
        }
    }
}

extension AttributeSecurity {
    /// The security a Security Request asks for.
    init(_ level: SimulatedPairing.SecurityLevel) {
        self = level == .authenticated ? .authenticated : .encrypted
    }
}
