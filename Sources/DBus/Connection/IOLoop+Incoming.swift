import CDBus

extension IOLoop {
    /// Answers a method call addressed to one of our exported objects.
    func handleMethodCall(_ raw: OpaquePointer) {
        do throws(DBusError) {
            if let hit = resolvedCall(raw) {
                if let direct = hit.direct {
                    let call = ReceivedCall(raw: raw, path: hit.path, outSignature: direct.outSignature, core: core)
                    return answer(direct.handler(call), to: raw, expecting: direct.outSignature)
                }
                let call = try MessageDecoder.decodeCall(
                    raw, path: hit.path, interface: hit.interface, member: hit.member, names: &recentNames)
                return answer(call, hit.resolution, received: raw)
            }
            let call = try MessageDecoder.decode(raw)
            // The wire's signature, not one spelt out again from the decoded body.
            let signature = dbus_message_get_signature(raw).map { String(cString: $0) } ?? ""
            let resolution = core.objects.withLock { $0.resolve(call, signature: signature) }
            answer(call, resolution, received: raw)
        } catch {
            if let header = try? MessageDecoder.decodeHeader(raw) {
                send(Self.errorReply(to: header, DBusError.StandardName.invalidArgs, error.message))
            }
        }
    }

    /// The resolution of a call to a method answered lately, found without decoding a name.
    private func resolvedCall(_ raw: OpaquePointer) -> ResolvedCall? {
        guard let path = dbus_message_get_path(raw), let member = dbus_message_get_member(raw),
            let signature = dbus_message_get_signature(raw)
        else { return nil }
        let interface = dbus_message_get_interface(raw)
        return core.objects.withLock {
            $0.resolvedCall(path: path, interface: interface, member: member, signature: signature)
        }
    }

    /// `received` is the call as libdbus delivered it, for deferred replies built straight
    /// from it; only valid during this turn, so `nil` for an answer given later.
    private func answer(_ call: DBusMessage, _ resolution: IncomingCall, received: OpaquePointer?) {
        switch resolution {
        case .restricted(let accepted, let inner):
            authorize(call.sender, as: accepted) { [unowned self] allowed in
                guard allowed else {
                    let text = "only \(accepted) may call \(call.interface?.rawValue ?? "")"
                    let denied = DBusError.reply(DBusError.StandardName.accessDenied, text)
                    return reply(to: call, with: .failure(denied), expecting: nil)
                }
                answer(call, inner, received: nil)
            }
        case .reply(let values):
            reply(to: call, with: .success(values), expecting: nil)
        case .error(let name, let text):
            reply(to: call, with: .failure(DBusError.reply(name, text)), expecting: nil)
        case .invoke(let invoked):
            // Fields read off the box one by one: a copy of the whole method retains each.
            switch invoked.method.handler {
            case .immediate(let handler):
                let result: Result<[DBusValue], DBusError>
                do { result = .success(try handler(call)) } catch { result = .failure(DBusError(handlerError: error)) }
                // Signals the handler queued (PropertiesChanged…) leave before the reply, as
                // bluetoothd's do.
                drainQueuedJobs()
                reply(to: call, with: result, expecting: invoked.method.outSignature)
            case .deferred(let handler):
                let reply = MethodReply(
                    call: call, received: received, outSignature: invoked.method.outSignature, core: core)
                handler(call, reply)
                // A handler that answered at once queued its signals and reply: they leave now,
                // in order, instead of after another turn of the loop.
                drainQueuedJobs()
            case .direct(let handler):
                let answer = handler(
                    ReceivedCall(
                        decoded: call, received: received, outSignature: invoked.method.outSignature, core: core))
                if let received { return self.answer(answer, to: received, expecting: invoked.method.outSignature) }
                drainQueuedJobs()
                if let result = answer.result { reply(to: call, with: result, expecting: invoked.method.outSignature) }
            case .async(let handler):
                let core = self.core
                Task {
                    let result: Result<[DBusValue], DBusError>
                    do { result = .success(try await handler(call)) } catch {
                        result = .failure(DBusError(handlerError: error))
                    }
                    core.enqueue { loop in loop.reply(to: call, with: result, expecting: invoked.method.outSignature) }
                }
            }
        case .setProperty(let interface, let name, let value, let property):
            let core = self.core
            guard let onSet = property.onSet else {
                reply(to: call, with: Connection.store(core, [(name, value)], [], interface, call.path), expecting: nil)
                return
            }
            Task {
                var result: Result<[DBusValue], DBusError>
                do {
                    try await onSet(value, call)
                    result = Connection.store(core, [(name, value)], [], interface, call.path)
                } catch {
                    result = .failure(DBusError(handlerError: error))
                }
                let outcome = result
                core.enqueue { loop in loop.reply(to: call, with: outcome, expecting: nil) }
            }
        }
    }

    /// Sends a direct handler's answer to `raw`, after the signals it emitted (as bluetoothd's
    /// leave before its reply). A return is built straight from the received call, and before
    /// those signals go: sent back to back, the reply mostly finds the bus daemon still awake
    /// from the signal, which spares its wake-up.
    private func answer(_ answer: DirectAnswer, to raw: OpaquePointer, expecting signature: Signature) {
        let wantsReply = dbus_message_get_no_reply(raw) == 0
        let built: OpaquePointer?
        switch answer {
        case .value(let value) where wantsReply && signature.types.count == 1 && value.hasType(signature.types[0]):
            built = try? MessageEncoder.methodReturn(to: raw, value)
        case .values(let values) where wantsReply && DBusValue.values(values, match: signature):
            built = try? MessageEncoder.methodReturn(to: raw, values)
        default:
            // No reply wanted, one of the wrong types, or an error: answered below.
            built = nil
        }
        drainQueuedJobs()
        if let built {
            sendRaw(built)
            dbus_message_unref(built)
            return
        }
        if let result = answer.result { reply(to: ReplyAddress(received: raw), with: result, expecting: signature) }
    }

    /// Sends the reply unless the caller asked for none (NO_REPLY_EXPECTED).
    func reply(to call: DBusMessage, with result: Result<[DBusValue], DBusError>, expecting signature: Signature?) {
        reply(to: ReplyAddress(call), with: result, expecting: signature)
    }

    /// ``reply(to:with:expecting:)`` by the caller's address alone, which is what a reply
    /// queued for later keeps instead of the whole call.
    func reply(to call: ReplyAddress, with result: Result<[DBusValue], DBusError>, expecting signature: Signature?) {
        guard !call.noReplyExpected else { return }
        switch result {
        case .success(let values):
            if let signature, !DBusValue.values(values, match: signature) {
                var produced = ""
                for value in values { value.appendSignature(to: &produced) }
                send(
                    Self.errorReply(
                        to: call, DBusError.StandardName.failed,
                        "handler returned (\(produced)) where (\(signature.rawValue)) was declared"))
                return
            }
            let reply = DBusMessage(
                kind: .methodReturn, destination: call.sender, replySerial: call.serial, body: values)
            guard let raw = try? MessageEncoder.encode(reply) else {
                send(Self.errorReply(to: call, DBusError.StandardName.failed, "the reply could not be encoded"))
                return
            }
            sendRaw(raw)
            dbus_message_unref(raw)
        case .failure(let error):
            let name =
                error.code == .remote ? (error.name ?? DBusError.StandardName.failed) : DBusError.StandardName.failed
            send(Self.errorReply(to: call, name, error.message))
        }
    }

    static func errorReply(to call: DBusMessage, _ name: String, _ text: String) -> DBusMessage {
        errorReply(to: ReplyAddress(call), name, text)
    }

    static func errorReply(to call: ReplyAddress, _ name: String, _ text: String) -> DBusMessage {
        let valid = (try? ErrorName(name)) != nil ? name : DBusError.StandardName.failed
        return DBusMessage(
            kind: .error, errorName: valid, destination: call.sender, replySerial: call.serial,
            body: [.string(text.replacingNUL())])
    }
}

extension DirectAnswer {
    /// The answer as the general reply path takes it; `nil` for one given later.
    var result: Result<[DBusValue], DBusError>? {
        switch self {
        case .value(let value): .success([value])
        case .values(let values): .success(values)
        case .error(let error): .failure(error)
        case .later: nil
        }
    }
}

/// Where a reply goes: the caller and the serial of its call.
struct ReplyAddress: Sendable {
    var sender: BusName?
    var serial: UInt32
    var noReplyExpected: Bool

    init(_ call: DBusMessage) {
        sender = call.sender
        serial = call.serial
        noReplyExpected = call.noReplyExpected
    }

    init(received raw: OpaquePointer) {
        sender = dbus_message_get_sender(raw).map { BusName(unchecked: String(cString: $0)) }
        serial = dbus_message_get_serial(raw)
        noReplyExpected = dbus_message_get_no_reply(raw) != 0
    }
}

extension String {
    /// Error texts come from handlers; a NUL would make the reply unsendable.
    func replacingNUL() -> String {
        utf8.contains(0) ? String(decoding: utf8.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self) : self
    }
}

extension DBusError {
    /// Handlers may throw anything; what is not a DBusError travels as `Failed`.
    init(handlerError error: any Error) {
        if let error = error as? DBusError {
            self = error
        } else {
            self = DBusError(.remote, name: DBusError.StandardName.failed, message: "\(error)")
        }
    }
}
