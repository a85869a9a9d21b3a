/// Runs `operation` with a deadline: the first of its result, the timeout, or the caller's
/// cancellation wins; the loser is cancelled. Typed all the way through.
func withDeadline<Value: Sendable>(
    _ timeout: Duration, what: String, _ operation: @escaping @Sendable () async throws(BLEError) -> Value
) async throws(BLEError) -> Value {
    let result: Result<Value, BLEError> = await withTaskGroup(of: Result<Value, BLEError>?.self) { group in
        group.addTask {
            do throws(BLEError) { return .success(try await operation()) } catch { return .failure(error) }
        }
        group.addTask {
            do { try await Task.sleep(for: timeout) } catch { return nil }
            return .failure(.timeout(what))
        }
        var outcome: Result<Value, BLEError> = .failure(.cancelledByTask)
        for await next in group {
            guard let next else { continue }
            outcome = next
            break
        }
        group.cancelAll()
        return outcome
    }
    if Task.isCancelled, case .failure(let error) = result, error.code == .timeout {
        throw BLEError.cancelledByTask
    }
    return try result.get()
}
