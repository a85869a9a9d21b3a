/// What a ``Peripheral`` does when its link drops without ``Peripheral/disconnect()``.
public struct ReconnectPolicy: Sendable, Hashable {
    /// Delay before the first retry; `nil` means never reconnect.
    public var initialDelay: Duration?
    /// Each retry waits this much longer than the previous one.
    public var multiplier: Double
    /// The longest wait between retries.
    public var maximumDelay: Duration
    /// Random spread applied to each delay (0.2 = ±20 %), so many devices do not retry in step.
    public var jitter: Double
    /// Give up after this many attempts in a row (`nil`: keep trying).
    public var maximumAttempts: Int?

    /// Never reconnect (the default).
    public static let never = ReconnectPolicy(
        initialDelay: nil, multiplier: 1, maximumDelay: .zero, jitter: 0, maximumAttempts: nil)

    /// Exponential backoff: first retry after `initial` (1 s), doubling, capped at `maximum`
    /// (60 s), ±20 % jitter. Only transient failures (``BLEError/isTransient``) are retried.
    public static func exponentialBackoff(
        initial: Duration = .seconds(1), multiplier: Double = 2, maximum: Duration = .seconds(60),
        jitter: Double = 0.2, maximumAttempts: Int? = nil
    ) -> ReconnectPolicy {
        ReconnectPolicy(
            initialDelay: initial, multiplier: max(1, multiplier), maximumDelay: maximum,
            jitter: min(max(jitter, 0), 1), maximumAttempts: maximumAttempts)
    }

    /// Whether the policy reconnects at all.
    public var reconnects: Bool { initialDelay != nil }

    /// The wait before attempt number `attempt` (1-based), without jitter.
    public func baseDelay(attempt: Int) -> Duration {
        guard let initialDelay else { return .zero }
        var delay = initialDelay
        for _ in 1..<max(1, attempt) {
            delay = delay * multiplier
            if delay >= maximumDelay { return maximumDelay }
        }
        return min(delay, maximumDelay)
    }

    /// The wait before attempt number `attempt`, with jitter drawn from `random` in 0..<1.
    public func delay(attempt: Int, random: Double = Double.random(in: 0..<1)) -> Duration {
        let base = baseDelay(attempt: attempt)
        let factor = 1 + jitter * (2 * random - 1)
        return base * factor
    }
}
