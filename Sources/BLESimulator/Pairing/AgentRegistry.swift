import DBus

/// The agents bluetoothd knows (`src/agent.c`): one per bus client, and a queue of default
/// agents whose head answers requests no client's own agent covers.
struct AgentRegistry: Sendable {
    struct Agent: Sendable, Hashable {
        var owner: BusName
        var path: ObjectPath
        var capability: SimulatedPairing.IOCapability
    }

    private(set) var agents: [BusName: Agent] = [:]
    /// Every agent joins at registration (the first becomes default); `RequestDefaultAgent`
    /// moves one to the head.
    private var defaults: [BusName] = []

    /// `parse_io_capability` of 5.66: exact names, the empty string meaning KeyboardDisplay.
    static func capability(_ text: String) -> SimulatedPairing.IOCapability? {
        text.isEmpty ? .keyboardDisplay : SimulatedPairing.IOCapability(rawValue: text)
    }

    /// The owner of the default agent, the head of the queue.
    var defaultOwner: BusName? { defaults.first }

    /// The agent for a request from `sender` (`agent_get`): its own, else the default one.
    func agent(for sender: BusName?) -> Agent? {
        if let sender, let own = agents[sender] { return own }
        return defaults.first.flatMap { agents[$0] }
    }

    /// Whether `owner` has no agent yet, then registers.
    mutating func register(_ agent: Agent) -> Bool {
        guard agents[agent.owner] == nil else { return false }
        agents[agent.owner] = agent
        defaults.append(agent.owner)
        return true
    }

    /// Removes `owner`'s agent registered at `path` (any path when nil); whether one went.
    @discardableResult
    mutating func remove(_ owner: BusName, path: ObjectPath? = nil) -> Bool {
        guard let agent = agents[owner], path == nil || agent.path == path else { return false }
        agents[owner] = nil
        defaults.removeAll { $0 == owner }
        return true
    }

    /// Makes `owner`'s agent at `path` the default one; whether it exists.
    mutating func makeDefault(_ owner: BusName, path: ObjectPath) -> Bool {
        guard agents[owner]?.path == path else { return false }
        defaults.removeAll { $0 == owner }
        defaults.insert(owner, at: 0)
        return true
    }

    /// Empties the registry, returning who had an agent (to be sent `Release`).
    mutating func removeAll() -> [Agent] {
        defer {
            agents.removeAll()
            defaults.removeAll()
        }
        return agents.values.sorted { $0.owner.rawValue < $1.owner.rawValue }
    }
}
