import CDBus

extension IOLoop {
    /// Every incoming message but calls to `org.freedesktop.DBus.Peer`, as the loop pops it
    /// (the loop makes no libdbus pending calls, and registers no libdbus objects).
    func handleIncoming(_ raw: OpaquePointer) {
        switch dbus_message_get_type(raw) {
        case MessageTypeCode.signal:
            if dbus_message_is_signal(raw, "org.freedesktop.DBus.Local", "Disconnected") != 0 {
                let reason = DBusError(.disconnected, message: "the bus closed the connection")
                if core.options.reconnection != nil { detach(reason: reason) } else { markClosed(reason: reason) }
                return
            }
            routeSignal(raw)
        case MessageTypeCode.methodCall:
            handleMethodCall(raw)
        case MessageTypeCode.methodReturn, MessageTypeCode.error:
            if replyArrived(raw) { return }
            // A reply to nothing we wait for: a call we cancelled or timed out, or one that was
            // never made. It is dropped, and counted.
            core.counters.repliesIgnored.add(1, ordering: .relaxed)
            unexpectedReplyArrived(replySerial: dbus_message_get_reply_serial(raw))
        default:
            break
        }
    }

    private func routeSignal(_ raw: OpaquePointer) {
        core.counters.signals.add(1, ordering: .relaxed)
        if router.previewTakes(raw) { return }
        guard var message = try? MessageDecoder.decodeHeader(raw) else { return }
        let isOwnerChange =
            message.sender == .bus && message.member?.rawValue == "NameOwnerChanged"
            && message.interface == .bus
        guard isOwnerChange || router.wantsHeader(of: message) else { return }
        guard let body = try? MessageDecoder.decodeBody(raw) else { return }
        message.body = body
        if isOwnerChange { noteOwnerChange(message) }
        router.route(message)
    }

    private func noteOwnerChange(_ message: DBusMessage) {
        guard message.body.count == 3,
            case .string(let name) = message.body[0],
            case .string(let newOwner) = message.body[2],
            let busName = try? BusName(name),
            router.owners[busName] != nil || router.ownerWatchers[busName] != nil
        else { return }
        router.owners[busName] = newOwner.isEmpty ? .some(nil) : .some(BusName(unchecked: newOwner))
    }

    /// Registers a subscription, then makes sure the bus has its rule (and, for a well-known
    /// sender, knows the name's owner) before reporting success.
    func addSubscription(_ state: SubscriptionState, done: @escaping (Result<Void, DBusError>) -> Void) {
        if closed || detached {
            done(.failure(DBusError(.disconnected, message: "the connection is closed")))
            return
        }
        router.subscriptions[state.id] = state
        if case .handler(_, _, let preview?) = state.sink { router.previews[state.id] = preview }
        var remaining = 1
        var failure: DBusError?
        let step: (Result<Void, DBusError>) -> Void = { result in
            if case .failure(let error) = result, failure == nil { failure = error }
            remaining -= 1
            if remaining == 0 { done(failure.map { .failure($0) } ?? .success(())) }
        }
        for rule in state.rules {
            if let sender = rule.sender, !sender.isUnique, sender != .bus {
                remaining += 1
                watchOwner(of: sender, done: step)
            }
            remaining += 1
            acquireRule(rule.description, done: step)
        }
        step(.success(()))
    }

    func removeSubscription(_ id: UInt64) {
        guard let state = router.subscriptions.removeValue(forKey: id) else { return }
        router.previews[id] = nil
        for rule in state.rules {
            releaseRule(rule.description)
            if let sender = rule.sender, !sender.isUnique, sender != .bus {
                unwatchOwner(of: sender)
            }
        }
    }

    // MARK: Match rules, reference counted

    private func acquireRule(_ rule: String, done: @escaping (Result<Void, DBusError>) -> Void) {
        let count = router.ruleCounts[rule, default: 0]
        router.ruleCounts[rule] = count + 1
        if let waiters = pendingRuleAdds[rule] {
            pendingRuleAdds[rule] = waiters + [done]
            return
        }
        if count > 0 {
            done(.success(()))
            return
        }
        pendingRuleAdds[rule] = [done]
        callBus("AddMatch", [.string(rule)]) { [unowned self] result in
            let waiters = self.pendingRuleAdds.removeValue(forKey: rule) ?? []
            if case .failure = result {
                let left = (self.router.ruleCounts[rule] ?? 0) - waiters.count
                self.router.ruleCounts[rule] = left > 0 ? left : nil
            }
            let outcome = result.map { _ in () }
            for waiter in waiters { waiter(outcome) }
        }
    }

    private func releaseRule(_ rule: String) {
        guard let count = router.ruleCounts[rule] else { return }
        if count > 1 {
            router.ruleCounts[rule] = count - 1
            return
        }
        router.ruleCounts[rule] = nil
        guard !closed else { return }
        callBus("RemoveMatch", [.string(rule)]) { _ in }
    }

    private static func ownerRule(_ name: BusName) -> String {
        MatchRule(
            sender: .bus, interface: .bus, member: MemberName(unchecked: "NameOwnerChanged"),
            arguments: [0: name.rawValue]
        ).description
    }

    private func watchOwner(of name: BusName, done: @escaping (Result<Void, DBusError>) -> Void) {
        let watchers = router.ownerWatchers[name, default: 0]
        router.ownerWatchers[name] = watchers + 1
        // Rule first, then the query: the bus answers in order, so no change slips between.
        acquireRule(Self.ownerRule(name)) { [unowned self] result in
            if case .failure = result { return done(result) }
            if watchers > 0, self.router.owners[name] != nil { return done(.success(())) }
            self.queryOwner(of: name, done: done)
        }
    }

    /// Asks the bus who owns `name`, once for all who ask while the question is out: a
    /// subscription of several rules naming one sender (a BLE session's nine) asked nine times.
    /// The rule that follows the owner's changes is in place before the first question goes
    /// out, and it is the same rule for everyone who waits for that answer.
    private func queryOwner(of name: BusName, done: @escaping (Result<Void, DBusError>) -> Void) {
        if pendingOwnerQueries[name] != nil {
            pendingOwnerQueries[name]?.append(done)
            return
        }
        pendingOwnerQueries[name] = [done]
        callBus("GetNameOwner", [.string(name.rawValue)]) { [unowned self] reply in
            switch reply {
            case .success(let message):
                if case .string(let owner)? = message.body.first {
                    self.router.owners[name] = .some(BusName(unchecked: owner))
                }
            case .failure:
                if self.router.owners[name] == nil { self.router.owners[name] = .some(nil) }
            }
            for waiter in self.pendingOwnerQueries.removeValue(forKey: name) ?? [] { waiter(.success(())) }
        }
    }

    private func unwatchOwner(of name: BusName) {
        let watchers = router.ownerWatchers[name, default: 0] - 1
        if watchers > 0 {
            router.ownerWatchers[name] = watchers
            return
        }
        router.ownerWatchers[name] = nil
        router.owners[name] = nil
        releaseRule(Self.ownerRule(name))
    }

    /// A call to the bus driver whose reply is handled here on the I/O thread.
    func callBus(
        _ member: String, _ arguments: [DBusValue],
        then: @escaping (Result<DBusMessage, DBusError>) -> Void
    ) {
        let message = DBusMessage(
            kind: .methodCall, path: ObjectPath(unchecked: "/org/freedesktop/DBus"), interface: .bus,
            member: MemberName(unchecked: member), destination: .bus, body: arguments)
        startCall(
            core.makeID(), message, deadline: MonotonicClock.deadline(after: core.options.defaultTimeout),
            completion: .onLoop(then))
    }
}
