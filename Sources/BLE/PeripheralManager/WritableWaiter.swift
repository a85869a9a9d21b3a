import DBus
import Dispatch
import Foundation
import Glibc

/// One wait for a socket to have room, resumed exactly once: by the socket, or by
/// ``cancel()`` (whichever comes first; the source's cancel handler is the only resumer).
///
/// It watches a copy of the descriptor, closed only by that cancel handler. libdispatch keys
/// its registrations by descriptor number: a source still registered on a number its owner
/// closed (the channel hung up while a send waited for room) turns every later source on that
/// number, once the kernel hands it to another socket, deaf (an L2CAP channel, another
/// notify socket: their events never come). With a copy of its own, the number it watches is
/// closed only after dispatch let go of it.
final class WritableWaiter: Sendable, Hashable {
    private let signal = WaitSignal()
    private let source: PosixMutex<(any DispatchSourceWrite)?>
    /// The descriptor number its source watches (the copy's); nil when it had no copy.
    let watchedNumber: Int32?

    /// Starts watching a copy of `descriptor`. Without a descriptor to spare (or with
    /// `descriptor` closed), it ends after a few milliseconds instead, so that a sender tries
    /// again rather than waits for ever.
    init(watching descriptor: FileDescriptor, queue: DispatchQueue) {
        let signal = self.signal
        let copy = descriptor.withRawValue { fd -> FileDescriptor? in
            guard fd >= 0 else { return nil }
            return try? FileDescriptor(duplicating: fd)
        }
        watchedNumber = copy?.rawValue
        guard let copy else {
            source = PosixMutex(nil)
            queue.asyncAfter(deadline: .now() + .milliseconds(10)) { signal.fire() }
            return
        }
        let source = DispatchSource.makeWriteSource(fileDescriptor: copy.rawValue, queue: queue)
        source.setEventHandler { source.cancel() }
        source.setCancelHandler {
            copy.close()
            signal.fire()
        }
        source.resume()
        self.source = PosixMutex(source)
    }

    /// Returns once the socket had room or the wait was cancelled.
    func wait() async { await signal.wait() }

    /// Ends the wait (at once if it has not ended).
    func cancel() { source.withLock { $0?.cancel() } }

    static func == (lhs: WritableWaiter, rhs: WritableWaiter) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A one-shot signal: ``fire()`` resumes the waiter, now or when it arrives.
final class WaitSignal: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        var fired = false
    }

    private let state = PosixMutex(State())

    /// Returns once ``fire()`` was called (at once if it was).
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let fired = state.withLock { state -> Bool in
                if !state.fired { state.continuation = continuation }
                return state.fired
            }
            if fired { continuation.resume() }
        }
    }

    /// Resumes the waiter, or the next one to come.
    func fire() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.fired = true
            return state.continuation.take()
        }
        continuation?.resume()
    }
}
