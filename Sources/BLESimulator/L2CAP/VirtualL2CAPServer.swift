/// A PSM a virtual peripheral publishes: centrals open LE credit-based channels to it through
/// ``Simulator/l2capTransport``.
public struct VirtualL2CAPServer: Codable, Sendable, Hashable {
    /// What the peripheral does with what it receives.
    public enum Behavior: String, Codable, Sendable {
        /// Sends every SDU back.
        case echo
        /// Reads and drops every SDU (counted in ``SimulatorStatistics``).
        case sink
    }

    /// The PSM, 0x0001–0x00FF.
    public var psm: UInt16
    /// What it does with SDUs.
    public var behavior: Behavior = .echo
    /// Its receive MTU: the largest SDU a central may send.
    public var mtu: Int = 512

    /// Creates a server.
    public init(psm: UInt16, behavior: Behavior = .echo, mtu: Int = 512) {
        self.psm = psm
        self.behavior = behavior
        self.mtu = mtu
    }

    private enum CodingKeys: String, CodingKey { case psm, behavior, mtu }

    /// Decodes a server; `behavior` and `mtu` are optional.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        psm = try c.decode(UInt16.self, forKey: .psm)
        behavior = try c.decodeIfPresent(Behavior.self, forKey: .behavior) ?? .echo
        mtu = try c.decodeIfPresent(Int.self, forKey: .mtu) ?? 512
    }
}
