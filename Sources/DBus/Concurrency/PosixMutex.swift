import Glibc

/// A value guarded by a `pthread_mutex_t`, with the shape of `Synchronization.Mutex`:
/// `let state = PosixMutex(State())`, then `state.withLock { $0.count += 1 }`.
///
/// Every module of swift-ble locks with this instead of `Synchronization.Mutex`. On Linux,
/// Swift 6.3's `Mutex` waits with raw futex system calls that ThreadSanitizer does not model,
/// so under `make sanitize` every access made inside `Mutex.withLock` is reported as a race
/// and real races drown among them. ThreadSanitizer intercepts `pthread_mutex_lock` and
/// `pthread_mutex_unlock`, so the ordering this lock gives is visible to it. Uncontended, a
/// lock and unlock pair costs a few nanoseconds more than `Mutex` (README, "Sanitizers").
///
/// The value is stored next to the mutex in one heap allocation, since a `pthread_mutex_t`
/// must not move once initialised.
public struct PosixMutex<Value: ~Copyable>: ~Copyable {
    @usableFromInline let storage: PosixMutexStorage<Value>

    /// Creates a mutex that guards `initialValue`.
    @inlinable
    public init(_ initialValue: consuming sending Value) {
        storage = PosixMutexStorage.make(initialValue)
    }

    /// Runs `body` with exclusive access to the guarded value and returns what it returns.
    ///
    /// `body` must not call `withLock` on the same mutex: the lock is not recursive.
    @inlinable
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let mutex = storage.mutex
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage.value.pointee)
    }
}

// The mutex serialises every access to the value it guards; `sending` on the way in and out
// keeps the value from being shared outside the lock, as for `Synchronization.Mutex`.
extension PosixMutex: @unchecked Sendable where Value: ~Copyable {}

/// The heap object behind ``PosixMutex``: the mutex as the header, the value as the one element.
@usableFromInline
final class PosixMutexStorage<Value: ~Copyable>: ManagedBuffer<pthread_mutex_t, Value> {
    @inlinable
    var mutex: UnsafeMutablePointer<pthread_mutex_t> { withUnsafeMutablePointerToHeader { $0 } }

    @inlinable
    var value: UnsafeMutablePointer<Value> { withUnsafeMutablePointerToElements { $0 } }

    @inlinable
    static func make(_ initialValue: consuming sending Value) -> PosixMutexStorage {
        let buffer = create(minimumCapacity: 1) { _ in pthread_mutex_t() }
        let storage = unsafeDowncast(buffer, to: PosixMutexStorage.self)
        let status = pthread_mutex_init(storage.mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
        storage.value.initialize(to: initialValue)
        return storage
    }

    @inlinable
    deinit {
        _ = value.deinitialize(count: 1)
        pthread_mutex_destroy(mutex)
    }
}
