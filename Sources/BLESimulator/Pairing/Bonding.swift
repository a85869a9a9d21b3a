import DBus

/// A pairing in progress on one device: a `Pair` (`struct bonding_req` of `src/device.c`), or
/// one the peripheral asked for (only an `authentication_req`: there is no call to answer).
struct Bonding: Sendable {
    /// The `Pair` call, answered when bonding ends; nil when the peripheral started it.
    var reply: MethodReply?
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
    /// The security the peripheral asked for, with a Security Request or by refusing a request
    /// for want of encryption (``Daemon/raiseSecurity(_:_:to:then:)``); nil for a `Pair`. Such
    /// a pairing has no `Pair` to auto-accept Just Works, so the agent is asked to authorize it.
    var requestedByPeer: AttributeSecurity?
    /// GATT requests the peer refused for want of security, retried once this pairing ends
    /// (`bonded` tells how); see ``Daemon/raiseSecurity(_:_:to:then:)``.
    var waiting: [BondingWaiter] = []
}

/// A request held until a pairing ends: run under the state lock with whether it bonded.
typealias BondingWaiter = @Sendable (_ daemon: Daemon, _ state: inout SimState, _ bonded: Bool) -> Void
