import BlueZ
import DBus

extension Daemon {
    /// A registration fault (`registerAdvertisement`, `registerApplication`), taken by the shell
    /// when it accepts the call (`SimState.takeFault`) and applied here to the answer of the
    /// registration made: `delay` answers later, `noReply` never; `fail` drops the registration
    /// (`drop`) and fails the call with its error, `attError` and `dropLink` with `refusal`.
    /// Whether to answer now.
    ///
    /// Taken on arrival, not on completion: the fault belongs to the next call received, also
    /// when that call fails on the way (unregistered while pending) and a later one completes
    /// first.
    func answerRegistrationAfterFault(
        _ fault: SimulatedFault.Action?, _ key: RegistrationKey, _ reply: MethodReply, refusal: DBusError,
        drop: (RegistrationKey) -> Void
    ) async -> Bool {
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
