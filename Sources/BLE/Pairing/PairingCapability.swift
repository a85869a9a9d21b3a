/// What the user's device can show and type, as a pairing agent tells BlueZ
/// (`AgentManager1.RegisterAgent`). BlueZ and the peripheral pick the pairing method from both
/// sides' capabilities: Just Works, passkey entry, or numeric comparison.
public enum PairingCapability: String, Sendable, Hashable, CaseIterable {
    /// Can show a passkey but not confirm one.
    case displayOnly = "DisplayOnly"
    /// Can show a passkey and ask yes or no.
    case displayYesNo = "DisplayYesNo"
    /// Can type a passkey, shows nothing.
    case keyboardOnly = "KeyboardOnly"
    /// Neither: every pairing is Just Works (an unauthenticated key).
    case noInputNoOutput = "NoInputNoOutput"
    /// Can show and type.
    case keyboardDisplay = "KeyboardDisplay"
}
