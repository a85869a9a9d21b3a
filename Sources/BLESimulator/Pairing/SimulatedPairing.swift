/// How a ``VirtualPeripheral`` takes part in pairing (SMP): its IO capability, which together
/// with the pairing agent's picks the method (Just Works, passkey entry or numeric comparison,
/// per the LE Secure Connections table of the Core specification, Vol 3 Part H 2.3.5.1), the
/// passkey it shows or types, and what it insists on.
///
/// The default is a peripheral with no display and no keyboard: every pairing is Just Works.
public struct SimulatedPairing: Sendable, Hashable, Codable {
    /// An IO capability, spelt as BlueZ's agent capabilities are.
    public enum IOCapability: String, Sendable, Hashable, Codable, CaseIterable {
        /// Shows a passkey, cannot confirm.
        case displayOnly = "DisplayOnly"
        /// Shows a passkey and has yes/no buttons.
        case displayYesNo = "DisplayYesNo"
        /// Has a keyboard, no display.
        case keyboardOnly = "KeyboardOnly"
        /// Neither: Just Works only.
        case noInputNoOutput = "NoInputNoOutput"
        /// Both.
        case keyboardDisplay = "KeyboardDisplay"
    }

    /// The security a peripheral asks for with an SMP Security Request (Core Vol 3 Part H 3.6.7):
    /// an encrypted link (bonding, no MITM flag) or an authenticated one (MITM flag set).
    public enum SecurityLevel: String, Sendable, Hashable, Codable, CaseIterable {
        /// Any key will do: Just Works is enough.
        case encrypted
        /// An authenticated (MITM-protected) key: passkey entry or numeric comparison.
        case authenticated
    }

    /// The peripheral's IO capability.
    public var ioCapability: IOCapability = .noInputNoOutput
    /// The six-digit passkey the peripheral shows (passkey entry on our side), types (when
    /// the agent displays one) or shows for numeric comparison.
    public var passkey: UInt32 = 123_456
    /// Whether it demands an authenticated (MITM-protected) key: Just Works then fails with
    /// `AuthenticationFailed`.
    public var requiresAuthentication = false
    /// Whether it refuses to pair at all (SMP "Pairing Not Supported"): `AuthenticationRejected`.
    public var rejects = false
    /// Whether it sends a Security Request as soon as a link is up (sensors that demand a bond
    /// do), so that the central's kernel pairs without anyone calling `Pair`; nil: it never asks
    /// by itself (``Simulator/requestSecurity(address:level:)`` still can).
    public var requestsSecurity: SecurityLevel?

    /// Just Works, no demands.
    public init(
        ioCapability: IOCapability = .noInputNoOutput, passkey: UInt32 = 123_456, requiresAuthentication: Bool = false,
        rejects: Bool = false, requestsSecurity: SecurityLevel? = nil
    ) {
        self.ioCapability = ioCapability
        self.passkey = passkey
        self.requiresAuthentication = requiresAuthentication
        self.rejects = rejects
        self.requestsSecurity = requestsSecurity
    }

    private enum CodingKeys: String, CodingKey {
        case ioCapability, passkey, requiresAuthentication, rejects, requestsSecurity
    }

    /// Decodes with every field optional; an unknown key is an error.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        ioCapability = try c.decodeIfPresent(IOCapability.self, forKey: .ioCapability) ?? .noInputNoOutput
        passkey = try c.decodeIfPresent(UInt32.self, forKey: .passkey) ?? 123_456
        requiresAuthentication = try c.decodeIfPresent(Bool.self, forKey: .requiresAuthentication) ?? false
        rejects = try c.decodeIfPresent(Bool.self, forKey: .rejects) ?? false
        requestsSecurity = try c.decodeIfPresent(SecurityLevel.self, forKey: .requestsSecurity)
    }
}
