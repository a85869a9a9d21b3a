import Glibc

/// An owned Unix file descriptor, as D-Bus passes them (`h`).
///
/// The descriptor is closed when the last reference goes away, unless ``take()`` handed it
/// over first. Sending one duplicates it, so the sender keeps its own.
public final class FileDescriptor: Sendable, Hashable, CustomStringConvertible {
    private let storage: PosixMutex<Int32>

    /// Takes ownership of `descriptor`.
    public init(owning descriptor: Int32) {
        storage = PosixMutex(descriptor)
    }

    /// Duplicates `descriptor` and owns the copy; the caller keeps the original.
    public convenience init(duplicating descriptor: Int32) throws(DBusError) {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        if copy < 0 { throw DBusError(.io, message: "dup(\(descriptor)) failed: errno \(errno)") }
        self.init(owning: copy)
    }

    deinit {
        let descriptor = storage.withLock { $0 }
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// The descriptor number, or -1 after ``take()`` or ``close()``.
    public var rawValue: Int32 { storage.withLock { $0 } }

    /// Runs `body` with the descriptor number (-1 after ``take()`` or ``close()``) while
    /// neither can run, so the number is not closed, and reused for another file, under a
    /// call `body` makes with it. `body` must not block.
    public func withRawValue<Result>(_ body: (Int32) -> Result) -> Result {
        storage.withLock { body($0) }
    }

    /// Hands the descriptor over: the caller now closes it, this object no longer will.
    public func take() -> Int32 {
        storage.withLock { descriptor in
            defer { descriptor = -1 }
            return descriptor
        }
    }

    /// Closes the descriptor now instead of at deinit.
    public func close() {
        let descriptor = take()
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// Whether the two are the same.
    public static func == (lhs: FileDescriptor, rhs: FileDescriptor) -> Bool { lhs === rhs }
    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    /// A short, human-readable form.
    public var description: String { "fd \(rawValue)" }
}
