extension Connection {
    /// Subscribes to the signals matching `rule`.
    ///
    /// Returns once the bus has the rule (and, for a well-known ``MatchRule/sender``, once its
    /// owner is known), so a read made after this call cannot miss a change signalled after it.
    public func signals(
        matching rule: MatchRule, buffering: SignalBuffering? = nil
    ) async throws(DBusError) -> SignalSubscription {
        try await signals(matchingAny: [rule], buffering: buffering)
    }

    /// Subscribes to the signals matching any of `rules`, in one stream: messages keep the
    /// order in which the bus delivered them, which separate subscriptions cannot promise.
    public func signals(
        matchingAny rules: [MatchRule], buffering: SignalBuffering? = nil
    ) async throws(DBusError) -> SignalSubscription {
        guard !rules.isEmpty else { throw DBusError(.invalidValue, message: "a subscription needs a rule") }
        for rule in rules { try rule.validate() }
        let policy = buffering ?? options.defaultSignalBuffering
        let (stream, continuation) = AsyncStream<DBusMessage>.makeStream(
            bufferingPolicy: policy.limit.map { .bufferingOldest($0) } ?? .unbounded)
        let state = SubscriptionState(id: core.makeID(), rules: rules, sink: .stream(continuation), core: core)
        continuation.onTermination = { _ in state.terminated() }
        try await register(state)
        return SignalSubscription(stream: stream, state: state)
    }

    /// Calls `handler` on the I/O thread with every signal matching any of `rules`, in the
    /// order the bus delivered them, until the returned subscription is cancelled or the
    /// connection ends (then `ended` runs, once).
    ///
    /// For code whose state a lock guards: the message reaches it with no buffer and no task in
    /// between, and before any reply that the bus delivered after it resumes its caller, so
    /// state it updates here is current when such a caller reads it. `handler` must not block.
    /// Returns once the bus has the rules, as ``signals(matchingAny:buffering:)`` does.
    ///
    /// `preview`, when given, sees every signal this connection receives before anything
    /// decodes it, as a ``ReceivedSignal``, and takes those it returns true for: they reach no
    /// subscription of this connection (this handler included). For a frequent signal that a
    /// few header fields and arguments settle. It must check the sender itself.
    public func signalHandler(
        matchingAny rules: [MatchRule], ended: @escaping @Sendable () -> Void = {},
        preview: (@Sendable (borrowing ReceivedSignal) -> Bool)? = nil,
        _ handler: @escaping @Sendable (DBusMessage) -> Void
    ) async throws(DBusError) -> SignalHandlerSubscription {
        guard !rules.isEmpty else { throw DBusError(.invalidValue, message: "a subscription needs a rule") }
        for rule in rules { try rule.validate() }
        let state = SubscriptionState(
            id: core.makeID(), rules: rules, sink: .handler(handler, ended: ended, preview: preview), core: core)
        try await register(state)
        return SignalHandlerSubscription(state: state)
    }

    /// Adds `state` to the router and waits until the bus has its rules; on failure the
    /// subscription is ended.
    private func register(_ state: SubscriptionState) async throws(DBusError) {
        let core = self.core
        let slot = CallSlot(counters: core.counters)
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { waiter in
                slot.register(waiter)
                let accepted = core.enqueue { loop in
                    loop.addSubscription(state) { added in slot.finish(added.flatMap { CallSlot.done }) }
                }
                if !accepted { slot.finish(.failure(DBusError(.disconnected, message: "the connection is closed"))) }
            }
        } onCancel: {
            slot.finish(.failure(DBusError(.cancelled, message: "the task was cancelled")))
        }
        if case .failure(let error) = result {
            state.cancel()
            throw error
        }
    }

    /// Changes of ownership of bus names (`NameOwnerChanged` from the bus), optionally of one name.
    public func nameOwnerChanges(
        of name: BusName? = nil, buffering: SignalBuffering? = nil
    ) async throws(DBusError) -> NameOwnerChanges {
        let rule = MatchRule(
            sender: .bus, interface: .bus, member: MemberName(unchecked: "NameOwnerChanged"),
            arguments: name.map { [0: $0.rawValue] } ?? [:])
        return NameOwnerChanges(subscription: try await signals(matching: rule, buffering: buffering))
    }
}

/// A subscription whose signals go to a handler on the I/O thread
/// (``Connection/signalHandler(matchingAny:ended:preview:_:)``). Cancel it to stop; it also ends with
/// the connection.
public struct SignalHandlerSubscription: Sendable {
    let state: SubscriptionState

    /// The match rules it was made with.
    public var rules: [MatchRule] { state.rules }

    /// Ends the subscription now; its `ended` function runs, and no message reaches the handler
    /// after this returns on the I/O thread (messages being delivered elsewhere may still land).
    public func cancel() { state.cancel() }
}

/// One change of a bus name's owner.
public struct NameOwnerChange: Sendable, Hashable {
    /// The name whose owner changed.
    public var name: BusName
    /// The unique name that owned it before, if any.
    public var oldOwner: BusName?
    /// The unique name that owns it now, if any.
    public var newOwner: BusName?
}

/// The `NameOwnerChanged` signals of the bus, decoded.
public struct NameOwnerChanges: AsyncSequence, Sendable {
    /// What each iteration step yields.
    public typealias Element = NameOwnerChange

    /// The underlying subscription (for its drop count, or to cancel it).
    public let subscription: SignalSubscription

    /// Iterates changes; malformed signals are skipped.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: SignalSubscription.AsyncIterator
        /// The next change, or `nil` once the subscription ended.
        public mutating func next() async -> NameOwnerChange? {
            while let message = await base.next() {
                guard message.body.count == 3,
                    case .string(let name) = message.body[0],
                    case .string(let old) = message.body[1],
                    case .string(let new) = message.body[2],
                    let busName = try? BusName(name)
                else { continue }
                return NameOwnerChange(
                    name: busName, oldOwner: old.isEmpty ? nil : try? BusName(old),
                    newOwner: new.isEmpty ? nil : try? BusName(new))
            }
            return nil
        }
    }

    /// Starts iterating.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: subscription.makeAsyncIterator()) }
}
