import BlueZ
import DBus

extension Daemon {
    /// `AgentManager1` as `src/agent.c` answers it: one agent per client, every agent queued
    /// as a default, errors by name.
    func agentManagerMethods() throws(DBusError) -> [ExportedMethod] {
        [
            .immediate(BlueZMethod.registerAgent, in: try Signature("os")) { [weak self] call in
                try self?.registerAgent(call)
                return []
            },
            .immediate(BlueZMethod.unregisterAgent, in: try Signature("o")) { [weak self] call in
                try self?.unregisterAgent(call)
                return []
            },
            .immediate(BlueZMethod.requestDefaultAgent, in: try Signature("o")) { [weak self] call in
                try self?.requestDefaultAgent(call)
                return []
            },
        ]
    }

    private func registerAgent(_ call: DBusMessage) throws(DBusError) {
        guard let sender = call.sender else { throw Self.invalidArguments }
        try core.state.withLock { (state: inout SimState) throws(DBusError) in
            // The sender is checked before the arguments, as `register_agent` does.
            guard state.agents.agents[sender] == nil else {
                throw Self.error(BlueZErrorName.alreadyExists, BlueZErrorMessage.alreadyExists)
            }
            guard case .objectPath(let path)? = call.body.first, case .string(let text)? = call.body.last,
                let capability = AgentRegistry.capability(text)
            else { throw Self.invalidArguments }
            _ = state.agents.register(AgentRegistry.Agent(owner: sender, path: path, capability: capability))
        }
    }

    private func unregisterAgent(_ call: DBusMessage) throws(DBusError) {
        guard let sender = call.sender, case .objectPath(let path)? = call.body.first else {
            throw Self.invalidArguments
        }
        // No `Release` for an explicit unregistration.
        let removed = core.state.withLock { $0.agents.remove(sender, path: path) }
        guard removed else { throw Self.error(BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist) }
    }

    private func requestDefaultAgent(_ call: DBusMessage) throws(DBusError) {
        guard let sender = call.sender, case .objectPath(let path)? = call.body.first else {
            throw Self.invalidArguments
        }
        let made = core.state.withLock { $0.agents.makeDefault(sender, path: path) }
        guard made else { throw Self.error(BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist) }
    }

    // MARK: Calling agents

    /// A call bluetoothd makes without waiting (`g_dbus_send_message`): `DisplayPasskey`,
    /// `Cancel`, `Release`.
    func notify(_ agent: AgentRegistry.Agent, _ member: MemberName, _ arguments: [DBusValue] = []) {
        try? connection.send(
            DBusMessage(
                kind: .methodCall, path: agent.path, interface: BlueZInterface.agent1, member: member,
                destination: agent.owner, noReplyExpected: true, body: arguments))
    }

    /// Sends `Release` to every agent, as bluetoothd does when it exits (`agent_destroy`).
    func releaseAgents(_ state: inout SimState) {
        for agent in state.agents.removeAll() { notify(agent, BlueZMethod.release) }
    }
}
