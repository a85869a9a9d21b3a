extension IOLoop {
    /// Decides whether `sender` speaks for `accepted`: the same unique name, or the current
    /// owner of a well-known one. The owner is known without a round trip when a signal
    /// subscription already follows the name (as BLE's does for `org.bluez`); otherwise the
    /// bus is asked, so a forged or stale sender is never trusted.
    func authorize(_ sender: BusName?, as accepted: BusName, then decide: @escaping (Bool) -> Void) {
        guard let sender else { return decide(false) }
        if accepted.isUnique || accepted == .bus { return decide(sender == accepted) }
        if let followed = router.owners[accepted] { return decide(followed == sender) }
        callBus("GetNameOwner", [.string(accepted.rawValue)]) { result in
            guard case .success(let reply) = result, case .string(let owner)? = reply.body.first else {
                return decide(false)
            }
            decide(owner == sender.rawValue)
        }
    }
}
