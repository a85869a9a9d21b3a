import DBus

/// One operation in flight that several callers wait for (a second `connect` or `pair()` joins the first
/// instead of getting BlueZ's `InProgress`). Each caller waits on its own slot: a cancelled
/// caller leaves at once, and the operation itself is cancelled only when its last caller
/// leaves that way.
final class SharedAttempt<Value: Sendable>: Sendable {
    private let task: Task<Result<Value, BLEError>, Never>
    private let waiters = PosixMutex(0)

    init(_ task: Task<Result<Value, BLEError>, Never>) { self.task = task }

    /// How many callers are waiting.
    var waiterCount: Int { waiters.withLock { $0 } }

    /// Whether callers are still waiting.
    var isWaitedFor: Bool { waiterCount > 0 }

    /// Waits for the result, or for this caller's cancellation.
    func join(diagnostics: BLEDiagnostics, executor: ConnectionExecutor) async -> Result<Value, BLEError> {
        waiters.withLock { $0 += 1 }
        let slot = OnceSlot<Value>(diagnostics: diagnostics)
        let task = self.task
        Task(executorPreference: executor) { slot.finish(await task.value) }
        let result = await withTaskCancellationHandler {
            await slot.wait()
        } onCancel: {
            slot.finish(.failure(.cancelledByTask))
        }
        let abandoned = waiters.withLock { count -> Bool in
            count -= 1
            return count == 0 && Task.isCancelled
        }
        if abandoned { task.cancel() }
        return result
    }
}
