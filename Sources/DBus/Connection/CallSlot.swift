/// The one place a suspended caller is resumed: whichever of reply, error, timeout,
/// cancellation or disconnection reaches ``finish(_:)`` first wins, later ones are ignored.
///
/// Cancellation may arrive before the continuation is registered (the task was cancelled on
/// entry); the slot then remembers it and resumes the caller as soon as it registers.
///
/// The continuation is unchecked: this state machine already guarantees a single resumption
/// (the counters prove it in tests), and a checked one costs an allocation per call. The slot is
/// not generic, so releasing it after every call needs no generic metadata look-up; waits with
/// nothing to return (``Connection/signals(matchingAny:buffering:)``) finish it with ``done``.
final class CallSlot: Sendable {
    typealias Value = DBusMessage
    typealias Continuation = UnsafeContinuation<Result<Value, DBusError>, Never>

    /// The outcome of a wait that succeeded with nothing to return.
    static let done: Result<Value, DBusError> = .success(DBusMessage(kind: .methodReturn))

    private enum State {
        case empty
        case waiting(Continuation)
        case finishedEarly(Result<Value, DBusError>)
        case done
    }

    private let state = PosixMutex(State.empty)
    private let counters: ConnectionCounters

    init(counters: ConnectionCounters) {
        self.counters = counters
        counters.started.add(1, ordering: .relaxed)
    }

    /// Stores the continuation, or resumes it at once if the outcome is already known.
    func register(_ continuation: Continuation) {
        let early: Result<Value, DBusError>? = state.withLock { state in
            switch state {
            case .empty:
                state = .waiting(continuation)
                return nil
            case .finishedEarly(let result):
                state = .done
                return result
            case .waiting(let other):
                state = .waiting(other)
                return .failure(DBusError(.invalidValue, message: "continuation registered twice"))
            case .done:
                state = .done
                return .failure(DBusError(.invalidValue, message: "continuation registered after completion"))
            }
        }
        if let early {
            counters.finished.add(1, ordering: .relaxed)
            continuation.resume(returning: early)
        }
    }

    /// Resumes the caller with `result` unless it was resumed already; returns whether it won.
    @discardableResult
    func finish(_ result: Result<Value, DBusError>) -> Bool {
        let continuation: Continuation?? = state.withLock { state in
            switch state {
            case .empty:
                state = .finishedEarly(result)
                return .some(nil)
            case .waiting(let continuation):
                state = .done
                return .some(continuation)
            case .finishedEarly(let earlier):
                state = .finishedEarly(earlier)
                return nil
            case .done:
                state = .done
                return nil
            }
        }
        switch continuation {
        case .some(.some(let continuation)):
            counters.finished.add(1, ordering: .relaxed)
            continuation.resume(returning: result)
            return true
        case .some(.none):
            return true
        case .none:
            return false
        }
    }

    /// Takes the slot's lock once. A caller resumed with a reply calls this before reading it:
    /// the reply was decoded on the I/O thread before ``finish(_:)`` took the lock, so the
    /// caller's reads are ordered after those writes through a lock ThreadSanitizer sees. The
    /// concurrency runtime orders them too, but in code ThreadSanitizer does not instrument,
    /// which it reported as a race when the reply came before the caller had suspended.
    func synchronize() {
        state.withLock { _ in }
    }

    /// Whether an outcome has been decided.
    var isFinished: Bool {
        state.withLock { state in
            switch state {
            case .empty, .waiting: false
            case .finishedEarly, .done: true
            }
        }
    }
}
