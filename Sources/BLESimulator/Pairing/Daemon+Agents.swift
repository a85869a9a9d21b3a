import BlueZ
import DBus

extension Daemon {
    /// `AgentManager1` as `src/agent.c` answers it: one agent per client, every agent queued
    /// as a default, errors by name.
    func agentManagerMethods() throws(DBusError) -> [ExportedMethod] {
        [
            // Deferred: bluetoothd replies first, and the bondable change the agent causes is
            // announced when the kernel confirms it, after the reply.
            .deferred(BlueZMethod.registerAgent, in: try Signature("os")) { [weak self] call, reply in
                self?.registerAgent(call, reply)
            },
            .deferred(BlueZMethod.unregisterAgent, in: try Signature("o")) { [weak self] call, reply in
                self?.unregisterAgent(call, reply)
            },
            .immediate(BlueZMethod.requestDefaultAgent, in: try Signature("o")) { [weak self] call in
                try self?.requestDefaultAgent(call)
                return []
            },
        ]
    }

    private func registerAgent(_ call: DBusMessage, _ reply: MethodReply) {
        guard let sender = call.sender else { return reply.fail(Self.invalidArguments) }
        core.state.withLock { state in
            // The sender is checked before the arguments, as `register_agent` does.
            guard state.agents.agents[sender] == nil else {
                return reply.fail(Self.error(BlueZErrorName.alreadyExists, BlueZErrorMessage.alreadyExists))
            }
            guard case .objectPath(let path)? = call.body.first, case .string(let text)? = call.body.last,
                let capability = AgentRegistry.capability(text)
            else { return reply.fail(Self.invalidArguments) }
            let head = state.agents.defaultOwner
            _ = state.agents.register(AgentRegistry.Agent(owner: sender, path: path, capability: capability))
            reply.succeed()
            if state.agents.defaultOwner != head { defaultAgentChanged(&state) }
        }
    }

    private func unregisterAgent(_ call: DBusMessage, _ reply: MethodReply) {
        guard let sender = call.sender, case .objectPath(let path)? = call.body.first else {
            return reply.fail(Self.invalidArguments)
        }
        // No `Release` for an explicit unregistration.
        core.state.withLock { state in
            let head = state.agents.defaultOwner
            guard state.agents.remove(sender, path: path) else {
                return reply.fail(Self.error(BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist))
            }
            reply.succeed()
            if state.agents.defaultOwner != head { defaultAgentChanged(&state) }
        }
    }

    private func requestDefaultAgent(_ call: DBusMessage) throws(DBusError) {
        guard let sender = call.sender, case .objectPath(let path)? = call.body.first else {
            throw Self.invalidArguments
        }
        let made = core.state.withLock { state in
            // `add_default_agent` sets the IO capability again even when the head stays.
            defer { defaultAgentChanged(&state) }
            return state.agents.makeDefault(sender, path: path)
        }
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
