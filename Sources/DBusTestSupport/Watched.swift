import Synchronization

/// A task started as the reference of a causal check: whether it still runs can be read at
/// any moment without waiting for it. A test orders events against it instead of reading the
/// clock ("the write returned while the read sent before it still waits"): a loaded machine
/// delays both alike and leaves their order, while an operation that waited for what it must
/// not wait for ends after the reference.
public struct Watched<Value: Sendable>: Sendable {
    private final class Flag: Sendable {
        let ended = Atomic<Bool>(false)
    }

    /// The task running `body`.
    public let task: Task<Value, Never>
    private let flag: Flag

    /// Starts `body` in a task of its own.
    public init(_ body: @escaping @Sendable () async -> Value) {
        let flag = Flag()
        self.flag = flag
        task = Task {
            let value = await body()
            flag.ended.store(true, ordering: .releasing)
            return value
        }
    }

    /// Whether `body` has not returned yet.
    public var isRunning: Bool { !flag.ended.load(ordering: .acquiring) }

    /// What `body` returned, once it has.
    public var value: Value { get async { await task.value } }

    /// Cancels the task.
    public func cancel() { task.cancel() }
}
