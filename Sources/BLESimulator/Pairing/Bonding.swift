import DBus

/// A `Pair` in progress on one device (`struct bonding_req` of `src/device.c`).
struct Bonding: Sendable {
    /// The `Pair` call, answered when bonding ends.
    var reply: MethodReply
    /// Who called `Pair`: bonding is cancelled if it leaves the bus.
    var requester: BusName?
    /// The agent that answers for it, if any.
    var agent: AgentRegistry.Agent?
    var method: PairingMethod
    /// Tells this bonding's timers and agent replies from a later one's.
    var token: Int
    /// Whether the link was opened for the pairing (the kernel's Pair Device creates it).
    var openedLink = false
    /// Whether an agent request is waiting for its answer (an abort then sends `Cancel`).
    var agentAsked = false
    /// Whether the device was stored before `Pair` made it persistent.
    var wasStored: Bool
}
