/// What SMP does with the two IO capabilities, from the initiator's side (ours: the agent's).
enum PairingMethod: Sendable, Hashable {
    /// No user involvement; the key is unauthenticated.
    case justWorks
    /// The peripheral shows a passkey; the agent is asked for it (`RequestPasskey`).
    case passkeyEntry
    /// The agent shows a passkey (`DisplayPasskey`) that the peripheral's user types.
    case passkeyDisplay
    /// Both show the same number; the agent confirms it (`RequestConfirmation`).
    case numericComparison

    /// The LE Secure Connections mapping (Core Vol 3 Part H, Table 2.8), initiator × responder.
    /// bluetoothd's default capability for an agent-less `Pair` is `NoInputNoOutput`.
    static func select(
        initiator: SimulatedPairing.IOCapability, responder: SimulatedPairing.IOCapability
    ) -> PairingMethod {
        if initiator == .noInputNoOutput || responder == .noInputNoOutput { return .justWorks }
        switch (initiator, responder) {
        case (.displayOnly, .keyboardOnly), (.displayOnly, .keyboardDisplay), (.displayYesNo, .keyboardOnly),
            (.keyboardDisplay, .keyboardOnly):
            return .passkeyDisplay
        case (.keyboardOnly, _), (.keyboardDisplay, .displayOnly):
            return .passkeyEntry
        case (.displayYesNo, .displayYesNo), (.displayYesNo, .keyboardDisplay), (.keyboardDisplay, .displayYesNo),
            (.keyboardDisplay, .keyboardDisplay):
            return .numericComparison
        default:
            return .justWorks
        }
    }

    /// The key it yields: Just Works cannot protect against a man in the middle.
    var security: AttributeSecurity { self == .justWorks ? .encrypted : .authenticated }
}
