import CDBus

/// How a finished call reports back: to a suspended task, or to code on the I/O thread.
enum CallCompletion {
    case slot(CallSlot<DBusMessage>)
    case onLoop((Result<DBusMessage, DBusError>) -> Void)

    func finish(_ result: Result<DBusMessage, DBusError>) {
        switch self {
        case .slot(let slot): slot.finish(result)
        case .onLoop(let callback): callback(result)
        }
    }
}

/// A method call the loop has accepted: waiting for a free window slot, or sent.
struct OutgoingCall {
    var message: DBusMessage
    var deadline: UInt64
    var completion: CallCompletion
    var pending: OpaquePointer?
    /// The serial libdbus gave the call when sending it.
    var serial: UInt32 = 0
}

/// Calls waiting for a window slot, in arrival order, with their deadlines in a heap so the
/// loop can time them out without scanning.
struct CallQueue {
    private var order: [UInt64] = []
    private var head = 0
    private var deadlines = MinHeap<UInt64, UInt64>()

    mutating func append(_ id: UInt64, deadline: UInt64) {
        order.append(id)
        deadlines.insert(deadline, id)
    }

    mutating func popFirst() -> UInt64? {
        guard head < order.count else { return nil }
        let id = order[head]
        head += 1
        if head > 1024 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
        return id
    }

    var nearestDeadline: UInt64? { deadlines.min?.key }

    mutating func popExpired(now: UInt64) -> [UInt64] {
        var expired: [UInt64] = []
        while let top = deadlines.min, top.key <= now {
            expired.append(top.value)
            deadlines.removeMin()
        }
        return expired
    }

    mutating func removeAll() {
        order.removeAll()
        head = 0
        deadlines = MinHeap()
    }
}

extension IOLoop {
    /// Accepts a call: sends it now if the window allows, else queues it.
    func startCall(_ id: UInt64, _ message: DBusMessage, deadline: UInt64, completion: CallCompletion) {
        if closed {
            completion.finish(.failure(DBusError(.disconnected, message: "the connection is closed")))
            return
        }
        if case .slot(let slot) = completion, slot.isFinished { return }
        calls[id] = OutgoingCall(message: message, deadline: deadline, completion: completion)
        if inFlight < core.options.maxCallsInFlight {
            send(callID: id)
        } else {
            waitingCalls.append(id, deadline: deadline)
        }
    }

    private func send(callID id: UInt64) {
        guard let call = calls[id], let connection else { return }
        let millis = MonotonicClock.millisecondsUntil(call.deadline)
        if millis <= 0 {
            finishCall(id, .failure(Self.timeoutError(call.message)))
            return
        }
        let raw: OpaquePointer
        do {
            raw = try MessageEncoder.encode(call.message)
        } catch {
            finishCall(id, .failure(error))
            return
        }
        defer { dbus_message_unref(raw) }
        var pending: OpaquePointer?
        let sent = dbus_connection_send_with_reply(connection, raw, &pending, millis) != 0
        guard sent, let pending else {
            let error =
                sent
                ? DBusError(.disconnected, message: "the connection is closed")
                : DBusError(.limitExceeded, message: "out of memory sending a call")
            finishCall(id, .failure(error))
            return
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        dbus_pending_call_set_notify(pending, pendingCallDone, me, nil)
        calls[id]?.pending = pending
        calls[id]?.serial = dbus_message_get_serial(raw)
        callByPending[Int(bitPattern: UnsafeRawPointer(pending))] = id
        inFlight += 1
    }

    fileprivate func replyArrived(_ pending: OpaquePointer) {
        let key = Int(bitPattern: UnsafeRawPointer(pending))
        guard let id = callByPending.removeValue(forKey: key), let call = calls[id] else {
            dbus_pending_call_unref(pending)
            return
        }
        calls[id]?.pending = nil
        let reply = dbus_pending_call_steal_reply(pending)
        dbus_pending_call_unref(pending)
        // A reply without a sender is libdbus's own timeout error: the bus still awaits the
        // callee's answer and counts the call against our limit of pending replies until then.
        if let reply, dbus_message_get_sender(reply) == nil {
            abandon(call)
        } else {
            inFlight -= 1
        }
        let result: Result<DBusMessage, DBusError>
        if let reply {
            result = Self.result(of: reply, for: call)
            dbus_message_unref(reply)
        } else {
            result = .failure(DBusError(.disconnected, message: "no reply"))
        }
        finishCall(id, result)
        pumpWaitingCalls()
    }

    private static func result(of reply: OpaquePointer, for call: OutgoingCall) -> Result<DBusMessage, DBusError> {
        let message: DBusMessage
        do {
            message = try MessageDecoder.decode(reply)
        } catch {
            return .failure(error)
        }
        guard message.kind == .error, var error = message.error else { return .success(message) }
        // libdbus reports its own timeout as a NoReply error; tell it apart from a remote NoReply
        // (a peer that left without answering) by our deadline.
        if error.name == DBusError.StandardName.noReply && MonotonicClock.now() + 2_000_000 >= call.deadline {
            return .failure(timeoutError(call.message))
        }
        if error.name == DBusError.StandardName.disconnected { error.code = .disconnected }
        return .failure(error)
    }

    static func timeoutError(_ message: DBusMessage) -> DBusError {
        let what = [message.interface?.rawValue, message.member?.rawValue].compactMap { $0 }.joined(separator: ".")
        return DBusError(
            .timeout, name: DBusError.StandardName.noReply, message: "no reply to \(what) before the deadline")
    }

    private func finishCall(_ id: UInt64, _ result: Result<DBusMessage, DBusError>) {
        guard let call = calls.removeValue(forKey: id) else { return }
        call.completion.finish(result)
    }

    /// Sends queued calls while the window has room.
    private func pumpWaitingCalls() {
        while inFlight < core.options.maxCallsInFlight, let id = waitingCalls.popFirst() {
            guard let call = calls[id], call.pending == nil else { continue }
            if case .slot(let slot) = call.completion, slot.isFinished {
                calls[id] = nil
                continue
            }
            send(callID: id)
        }
    }

    /// The caller gave up (task cancelled): drop our side of the call.
    func cancelCall(_ id: UInt64) {
        guard let call = calls.removeValue(forKey: id) else { return }
        if let pending = call.pending {
            callByPending[Int(bitPattern: UnsafeRawPointer(pending))] = nil
            dbus_pending_call_cancel(pending)
            dbus_pending_call_unref(pending)
            abandon(call)
        }
        call.completion.finish(.failure(DBusError(.cancelled, message: "the task was cancelled")))
        pumpWaitingCalls()
    }

    /// Keeps the window slot of a sent call we no longer wait for, until its reply arrives.
    private func abandon(_ call: OutgoingCall) {
        if call.serial == 0 || !abandonedSerials.insert(call.serial).inserted { inFlight -= 1 }
    }

    /// A reply that reached the filter: if it answers an abandoned call, the bus no longer
    /// counts that call, so its window slot is free again.
    func unexpectedReplyArrived(replySerial: UInt32) {
        guard abandonedSerials.remove(replySerial) != nil else { return }
        inFlight -= 1
        pumpWaitingCalls()
    }

    func expireWaitingCalls() {
        guard waitingCalls.nearestDeadline != nil else { return }
        for id in waitingCalls.popExpired(now: MonotonicClock.now()) {
            guard let call = calls[id], call.pending == nil else { continue }
            finishCall(id, .failure(Self.timeoutError(call.message)))
        }
    }

    func failAllCalls(with error: DBusError) {
        let all = calls
        calls.removeAll()
        callByPending.removeAll()
        waitingCalls.removeAll()
        inFlight = 0
        abandonedSerials.removeAll()
        for call in all.values {
            if let pending = call.pending {
                dbus_pending_call_cancel(pending)
                dbus_pending_call_unref(pending)
            }
            call.completion.finish(.failure(error))
        }
    }
}

private func pendingCallDone(_ pending: OpaquePointer?, _ data: UnsafeMutableRawPointer?) {
    guard let pending, let data else { return }
    Unmanaged<IOLoop>.fromOpaque(data).takeUnretainedValue().replyArrived(pending)
}
