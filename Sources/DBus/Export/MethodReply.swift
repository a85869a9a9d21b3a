import Synchronization

/// The answer to one incoming method call, given by a ``ExportedMethod/Handler/deferred(_:)``
/// handler when it is ready. Only the first answer counts; later ones are ignored.
public final class MethodReply: Sendable {
    /// Kept only when the received message is not: a copy of the call costs a retain of each
    /// of its fields, and few handlers ask for it again (see ``message``).
    private let call: DBusMessage?
    /// What the queued reply needs of the call: a copy of the whole call costs a retain of
    /// each of its fields, twice per reply.
    private let address: ReplyAddress
    private let outSignature: Signature?
    private let core: ConnectionCore
    private let answered = Atomic<Bool>(false)
    /// The call as libdbus received it, kept so a return is built straight from it (see
    /// ``succeed(_:)``); `nil` when it was not at hand.
    private let received: OwnedMessage?

    init(call: DBusMessage, received raw: OpaquePointer?, outSignature: Signature?, core: ConnectionCore) {
        self.call = raw == nil ? call : nil
        self.address = ReplyAddress(call)
        self.outSignature = outSignature
        self.core = core
        self.received = raw.map { OwnedMessage(retaining: $0) }
    }

    /// For a call that was never decoded: its address is read off the received message.
    init(received raw: OpaquePointer, outSignature: Signature?, core: ConnectionCore) {
        self.call = nil
        self.address = ReplyAddress(received: raw)
        self.outSignature = outSignature
        self.core = core
        self.received = OwnedMessage(retaining: raw)
    }

    deinit {
        if !answered.load(ordering: .acquiring) {
            send(.failure(DBusError.reply(DBusError.StandardName.noReply, "the handler dropped the call unanswered")))
        }
        received?.release()
    }

    /// The call being answered.
    public var message: DBusMessage {
        if let call { return call }
        // Decoded once already, for the handler; the same bytes decode the same again.
        guard let received, let decoded = try? MessageDecoder.decode(received.raw) else {
            return DBusMessage(
                kind: .methodCall, sender: address.sender, serial: address.serial,
                noReplyExpected: address.noReplyExpected)
        }
        return decoded
    }

    /// Whether an answer has been given.
    public var isAnswered: Bool { answered.load(ordering: .acquiring) }

    /// Answers with a method return carrying `values`.
    public func succeed(_ values: [DBusValue] = []) {
        guard claim() else { return }
        guard !address.noReplyExpected else { return }
        // The common case is built on the caller's thread, with no message tree between; a
        // reply that does not match its declared types, or does not encode, goes the long way,
        // which answers with the error that says why.
        guard let received, outSignature.map({ DBusValue.values(values, match: $0) }) ?? true,
            let reply = try? MessageEncoder.methodReturn(to: received.raw, values)
        else { return send(.success(values)) }
        core.enqueueSend(OwnedMessage(adopting: reply))
    }

    /// Answers with an error reply; see ``ExportedMethod/Handler`` for how errors are named.
    public func fail(_ error: DBusError) { answer(.failure(error)) }

    private func answer(_ result: Result<[DBusValue], DBusError>) {
        guard claim() else { return }
        send(result)
    }

    /// Whether this is the first answer, which alone counts.
    private func claim() -> Bool {
        answered.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    private func send(_ result: Result<[DBusValue], DBusError>) {
        let address = self.address
        let signature = outSignature
        core.enqueue { loop in loop.reply(to: address, with: result, expecting: signature) }
    }
}
