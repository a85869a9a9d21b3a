import BlueZ
import DBus

extension Daemon {
    /// A registration fault (`registerAdvertisement`, `registerApplication`) on the answer of a
    /// registration already made: `delay` answers later, `noReply` never; `fail` drops the
    /// registration (`drop`) and fails the call with its error, `attError` and `dropLink` with
    /// `refusal`. Whether to answer now.
    func answerRegistrationAfterFault(
        _ operation: SimulatedFault.Operation, _ key: RegistrationKey, _ reply: MethodReply, refusal: DBusError,
        drop: (RegistrationKey) -> Void
    ) async -> Bool {
        let fault = core.state.withLock { $0.takeFault(operation, address: key.owner.rawValue) }
        switch fault {
        case nil: return true
        case .delay(let delay)?:
            try? await Task.sleep(for: delay)
            return true
        case .noReply?:
            hold(reply)
            return false
        case .fail(let name, let message)?:
            drop(key)
            reply.fail(Self.error(name, message))
            return false
        case .attError?, .dropLink?:
            drop(key)
            reply.fail(refusal)
            return false
        }
    }
}
