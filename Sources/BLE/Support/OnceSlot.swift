import DBus

/// A result delivered exactly once to one waiter: the first of completion, failure
/// (link drop) or cancellation wins.
final class OnceSlot<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Result<Value, BLEError>, Never>)
        case done(Result<Value, BLEError>)
        case delivered
    }

    private let state = PosixMutex(State.empty)
    private let diagnostics: BLEDiagnostics?

    init(diagnostics: BLEDiagnostics? = nil) { self.diagnostics = diagnostics }

    func finish(_ result: Result<Value, BLEError>) {
        let waiter: CheckedContinuation<Result<Value, BLEError>, Never>? = state.withLock { state in
            switch state {
            case .empty:
                state = .done(result)
                return nil
            case .waiting(let continuation):
                state = .delivered
                return continuation
            case .done, .delivered:
                return nil
            }
        }
        waiter?.resume(returning: result)
    }

    func wait() async -> Result<Value, BLEError> {
        let site = diagnostics.willSuspend()
        defer { diagnostics.didResume(site) }
        return await withCheckedContinuation { continuation in
            let ready: Result<Value, BLEError>? = state.withLock { state in
                switch state {
                case .done(let result):
                    state = .delivered
                    return result
                case .empty:
                    state = .waiting(continuation)
                    return nil
                case .waiting, .delivered:
                    return .failure(BLEError(.failed, message: "waited twice"))
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
