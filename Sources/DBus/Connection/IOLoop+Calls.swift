import CDBus

/// How a finished call reports back: to a suspended task, or to code on the I/O thread.
enum CallCompletion {
    case slot(CallSlot)
    case onLoop((Result<DBusMessage, DBusError>) -> Void)

    func finish(_ result: Result<DBusMessage, DBusError>) {
        switch self {
        case .slot(let slot): slot.finish(result)
        case .onLoop(let callback): callback(result)
        }
    }
}

/// A method call the loop has accepted: waiting for a free window slot, or sent.
///
/// A class, so the loop updates it in place instead of copying the message in and out of
/// ``IOLoop/calls``.
final class OutgoingCall {
    let id: UInt64
    let message: DBusMessage
    let deadline: UInt64
    let completion: CallCompletion
    /// The serial libdbus gave the call when sending it; 0 while it waits for a window slot.
    var serial: UInt32 = 0
    /// Sent and awaiting its reply (a key of ``IOLoop/sentSerials``).
    var isSent: Bool { serial != 0 }

    init(id: UInt64, message: DBusMessage, deadline: UInt64, completion: CallCompletion) {
        self.id = id
        self.message = message
        self.deadline = deadline
        self.completion = completion
    }
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

    var isEmpty: Bool { head >= order.count }

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
        if closed || detached {
            let state = closed ? "closed" : "off the bus (the bus went away; it reconnects)"
            completion.finish(.failure(DBusError(.disconnected, message: "the connection is \(state)")))
            return
        }
        if case .slot(let slot) = completion, slot.isFinished { return }
        let call = OutgoingCall(id: id, message: message, deadline: deadline, completion: completion)
        calls[IntegerKey(id)] = call
        // Behind calls already waiting: a call made from a reply's completion comes before the
        // loop sends the waiting ones.
        if inFlight < core.options.maxCallsInFlight && waitingCalls.isEmpty {
            send(call)
        } else {
            waitingCalls.append(id, deadline: deadline)
        }
    }

    private func send(_ call: OutgoingCall) {
        guard connection != nil else { return }
        let millis = MonotonicClock.millisecondsUntil(call.deadline)
        if millis <= 0 {
            finishCall(call.id, .failure(Self.timeoutError(call.message)))
            return
        }
        let raw: OpaquePointer
        do {
            raw = try encodedCalls.encode(call.message)
        } catch {
            finishCall(call.id, .failure(error))
            return
        }
        defer { dbus_message_unref(raw) }
        // A plain send, not libdbus's pending call: the loop matches the reply by its serial
        // (``replyArrived(_:)``) and keeps the deadline itself (``expireCalls()``). A pending call
        // would cost, per call, a hash-table entry, a timeout object and a ready-made NoReply
        // error message (libdbus builds it in advance so that a timeout cannot run out of
        // memory), all for bookkeeping the loop does anyway.
        var serial: UInt32 = 0
        guard queueForSending(raw, serial: &serial), serial != 0 else {
            finishCall(call.id, .failure(DBusError(.limitExceeded, message: "out of memory sending a call")))
            return
        }
        call.serial = serial
        sentSerials[IntegerKey(serial)] = call.id
        inFlight += 1
        sentDeadlines.insert(call.deadline, call.id)
    }

    /// A method return or error arrived: the reply to a call we wait for, or one to
    /// a call we gave up on (see ``unexpectedReplyArrived(replySerial:)``). Returns false for
    /// the latter.
    func replyArrived(_ reply: OpaquePointer) -> Bool {
        let replySerial = dbus_message_get_reply_serial(reply)
        guard let id = sentSerials.removeValue(forKey: IntegerKey(replySerial)), let call = calls[IntegerKey(id)]
        else { return false }
        inFlight -= 1
        finishCall(call.id, Self.result(of: reply, for: call, names: &replyNames))
        pumpWaitingCalls()
        return true
    }

    private static func result(
        of reply: OpaquePointer, for call: OutgoingCall, names: inout RecentBusNames
    ) -> Result<DBusMessage, DBusError> {
        let message: DBusMessage
        do {
            message = try MessageDecoder.decode(reply, names: &names)
        } catch {
            return .failure(error)
        }
        guard message.kind == .error, var error = message.error else { return .success(message) }
        // A NoReply at our deadline (the bus's reply timeout racing ours) is a timeout; tell it
        // apart from a remote NoReply (a peer that left without answering) by our deadline.
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
        guard let call = calls.removeValue(forKey: IntegerKey(id)) else { return }
        call.completion.finish(result)
    }

    /// Sends queued calls while the window has room.
    private func pumpWaitingCalls() {
        while inFlight < core.options.maxCallsInFlight, let id = waitingCalls.popFirst() {
            guard let call = calls[IntegerKey(id)], !call.isSent else { continue }
            if case .slot(let slot) = call.completion, slot.isFinished {
                calls[IntegerKey(id)] = nil
                continue
            }
            send(call)
        }
    }

    /// The caller gave up (task cancelled): drop our side of the call.
    func cancelCall(_ id: UInt64) {
        guard let call = calls[IntegerKey(id)] else { return }
        giveUp(call, DBusError(.cancelled, message: "the task was cancelled"))
        pumpWaitingCalls()
    }

    /// Ends a call before its reply: the caller gets `error`; a sent call keeps its window slot
    /// until the bus delivers the reply it still awaits.
    private func giveUp(_ call: OutgoingCall, _ error: DBusError) {
        calls[IntegerKey(call.id)] = nil
        if call.isSent, sentSerials.removeValue(forKey: IntegerKey(call.serial)) != nil {
            // The bus still awaits the callee's answer and counts the call against our limit.
            abandonedSerials.insert(call.serial)
        }
        call.completion.finish(.failure(error))
    }

    /// A reply that arrived: if it answers an abandoned call, the bus no longer
    /// counts that call, so its window slot is free again.
    func unexpectedReplyArrived(replySerial: UInt32) {
        guard abandonedSerials.remove(replySerial) != nil else { return }
        inFlight -= 1
        pumpWaitingCalls()
    }

    /// Times out the calls whose deadline has passed, queued or sent.
    func expireCalls() {
        guard waitingCalls.nearestDeadline != nil || sentDeadlines.min != nil else { return }
        let now = MonotonicClock.now()
        for id in waitingCalls.popExpired(now: now) {
            guard let call = calls[IntegerKey(id)], !call.isSent else { continue }
            finishCall(id, .failure(Self.timeoutError(call.message)))
        }
        var expiredSent = false
        // Entries of calls that ended otherwise stay in the heap until due or pruned.
        while let top = sentDeadlines.min, top.key <= now {
            sentDeadlines.removeMin()
            guard let call = calls[IntegerKey(top.value)], call.isSent else { continue }
            giveUp(call, Self.timeoutError(call.message))
            expiredSent = true
        }
        if expiredSent { pumpWaitingCalls() }
    }

    /// Drops the deadlines of calls no longer in flight once they outnumber the live ones, so
    /// calls answered early neither grow the heap without bound nor wake the loop when due.
    func pruneSentDeadlines() {
        guard sentDeadlines.count > 4 * calls.count + 64 || (calls.isEmpty && sentDeadlines.count > 0) else { return }
        sentDeadlines.removeAll()
        for call in calls.values where call.isSent { sentDeadlines.insert(call.deadline, call.id) }
    }

    func failAllCalls(with error: DBusError) {
        let all = calls
        calls.removeAll()
        waitingCalls.removeAll()
        sentDeadlines.removeAll()
        inFlight = 0
        sentSerials.removeAll()
        abandonedSerials.removeAll()
        for call in all.values { call.completion.finish(.failure(error)) }
    }
}
