/// Routes received signals to subscriptions and keeps the bus's match rules and the owners
/// of watched well-known names; lives on the I/O thread.
struct SignalRouter {
    var subscriptions: [UInt64: SubscriptionState] = [:]
    /// Match rules on the bus, by text, with how many subscriptions need each.
    var ruleCounts: [String: Int] = [:]
    /// Current owners of well-known names that some rule filters on (nil: no owner).
    var owners: [BusName: BusName?] = [:]
    var ownerWatchers: [BusName: Int] = [:]
    /// Handler subscriptions' previews (see ``SubscriptionState/Sink/handler(_:ended:preview:)``).
    var previews: [UInt64: @Sendable (borrowing ReceivedSignal) -> Bool] = [:]

    /// Offers a received signal to the previews; true when one took it.
    func previewTakes(_ raw: OpaquePointer) -> Bool {
        guard !previews.isEmpty else { return false }
        let signal = ReceivedSignal(raw: raw)
        for preview in previews.values where preview(signal) { return true }
        return false
    }

    func route(_ message: DBusMessage) {
        for subscription in subscriptions.values where subscription.rules.contains(where: { matches($0, message) }) {
            subscription.deliver(message)
        }
    }

    func wantsHeader(of message: DBusMessage) -> Bool {
        for subscription in subscriptions.values {
            for rule in subscription.rules where rule.matchesHeader(message) && senderMatches(rule, message) {
                return true
            }
        }
        return false
    }

    func matches(_ rule: MatchRule, _ message: DBusMessage) -> Bool {
        rule.matchesIgnoringSender(message) && senderMatches(rule, message)
    }

    private func senderMatches(_ rule: MatchRule, _ message: DBusMessage) -> Bool {
        guard let wanted = rule.sender else { return true }
        guard let sender = message.sender else { return false }
        if wanted.isUnique || wanted == .bus { return sender == wanted }
        guard let owner = owners[wanted], let owner else { return false }
        return owner == sender
    }

    mutating func finishAll() {
        let all = subscriptions.values
        subscriptions.removeAll()
        previews.removeAll()
        for subscription in all { subscription.finish() }
    }
}
