import Synchronization

/// The answer to one incoming method call, given by a ``ExportedMethod/Handler/deferred(_:)``
/// handler when it is ready. Only the first answer counts; later ones are ignored.
public final class MethodReply: Sendable {
    private let call: DBusMessage
    /// What the queued reply needs of the call: a copy of the whole call costs a retain of
    /// each of its fields, twice per reply.
    private let address: ReplyAddress
    private let outSignature: Signature?
    private let core: ConnectionCore
    private let answered = Atomic<Bool>(false)

    init(call: DBusMessage, outSignature: Signature?, core: ConnectionCore) {
        self.call = call
        self.address = ReplyAddress(call)
        self.outSignature = outSignature
        self.core = core
    }

    deinit {
        if !answered.load(ordering: .acquiring) {
            send(.failure(DBusError.reply(DBusError.StandardName.noReply, "the handler dropped the call unanswered")))
        }
    }

    /// The call being answered.
    public var message: DBusMessage { call }

    /// Whether an answer has been given.
    public var isAnswered: Bool { answered.load(ordering: .acquiring) }

    /// Answers with a method return carrying `values`.
    public func succeed(_ values: [DBusValue] = []) { answer(.success(values)) }

    /// Answers with an error reply; see ``ExportedMethod/Handler`` for how errors are named.
    public func fail(_ error: DBusError) { answer(.failure(error)) }

    private func answer(_ result: Result<[DBusValue], DBusError>) {
        guard answered.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        send(result)
    }

    private func send(_ result: Result<[DBusValue], DBusError>) {
        let address = self.address
        let signature = outSignature
        core.enqueue { loop in loop.reply(to: address, with: result, expecting: signature) }
    }
}
