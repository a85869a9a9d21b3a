import DBus

/// Runs `operation` with a deadline: the first of its result, the timeout, or the caller's
/// cancellation wins; the loser is cancelled. Typed all the way through.
///
/// Given `connection`, the deadline is timed by its I/O loop (``DBus/Connection/sleep(for:)``),
/// which wakes no timer thread; else, or once that connection is closed, by `Task.sleep`.
func withDeadline<Value: Sendable>(
    _ timeout: Duration, what: String, timedBy connection: Connection? = nil,
    _ operation: @escaping @Sendable () async throws(BLEError) -> Value
) async throws(BLEError) -> Value {
    let result: Result<Value, BLEError> = await withTaskGroup(of: Result<Value, BLEError>?.self) { group in
        group.addTask {
            do throws(BLEError) { return .success(try await operation()) } catch { return .failure(error) }
        }
        group.addTask {
            guard await sleep(timeout, timedBy: connection) else { return nil }
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

/// Sleeps for `duration`; false when cancelled first. Time itself is what is waited for (the
/// deadline the SDK promises), so this is no polling. A closed connection's loop no longer
/// keeps time, and `Task.sleep` keeps the rest of the promise, counted from the same start.
private func sleep(_ duration: Duration, timedBy connection: Connection?) async -> Bool {
    let start = ContinuousClock.now
    if let connection {
        do throws(DBusError) {
            try await connection.sleep(for: duration)
            return true
        } catch {
            if error.code == .cancelled { return false }
        }
    }
    do { try await Task.sleep(until: start + duration, clock: .continuous) } catch { return false }
    return true
}
