import DBus
import Dispatch
import Synchronization

/// A socket watched for readability and writability by two dispatch sources on one serial
/// queue: epoll, no thread blocked per socket and no polling. It is closed (and counted in
/// ``BLEDiagnostics``) only once both sources are cancelled, so neither ever watches a number
/// the process has reused.
///
/// libdispatch reports a hang-up once: on `EPOLLHUP` it delivers that one event and removes
/// the descriptor from its epoll set for good, so a read source stopped with data left in the
/// socket would, once resumed, never fire again. ``watchReadable(_:)`` therefore reads on
/// resuming instead of waiting for a readiness event that may never come.
final class WatchedSocket: Sendable {
    let descriptor: FileDescriptor
    let queue: DispatchQueue
    /// The sources (kept under the lock: dispatch sources are not `Sendable`), which of them
    /// run (a dispatch source starts inactive; one left suspended must be resumed to be
    /// released), and whether both were cancelled.
    private struct Watch {
        let read: any DispatchSourceRead
        let write: any DispatchSourceWrite
        var reading = false
        /// Reading was stopped once: starting it again calls `onReadable` at once.
        var readingStopped = false
        var writing = false
        var cancelled = false
    }

    private let watching: PosixMutex<Watch>
    private let onReadable: @Sendable () -> Void
    /// Set when the socket is handed over: then it is not closed once dispatch let go of it.
    private let handedOver = StopFlag()

    init(
        _ descriptor: FileDescriptor, diagnostics: BLEDiagnostics?, onReadable: @escaping @Sendable () -> Void,
        onWritable: @escaping @Sendable () -> Void
    ) {
        self.descriptor = descriptor
        self.onReadable = onReadable
        queue = DispatchQueue(label: "swift-ble.socket", target: Self.sharedTarget)
        let readSource = DispatchSource.makeReadSource(fileDescriptor: descriptor.rawValue, queue: queue)
        let writeSource = DispatchSource.makeWriteSource(fileDescriptor: descriptor.rawValue, queue: queue)
        diagnostics?.socketsOpenedCount.add(1, ordering: .relaxed)
        let remaining = Atomic<Int>(2)
        let handedOver = self.handedOver
        let release: @Sendable () -> Void = {
            guard remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
            if !handedOver.isSet { descriptor.close() }
            diagnostics?.socketsClosedCount.add(1, ordering: .relaxed)
        }
        readSource.setEventHandler(handler: onReadable)
        writeSource.setEventHandler(handler: onWritable)
        readSource.setCancelHandler(handler: release)
        writeSource.setCancelHandler(handler: release)
        watching = PosixMutex(Watch(read: readSource, write: writeSource))
    }

    /// Every socket's events are handled on queues that share this one: a few threads in all.
    private static let sharedTarget = DispatchQueue(label: "swift-ble.socket.io", attributes: .concurrent)

    /// Starts or stops calling `onReadable` while the socket is readable. Started again after
    /// a stop, it also calls `onReadable` once, on the sources' queue: the source may have
    /// spent the peer's hang-up (its last event) on the read that stopped it.
    func watchReadable(_ on: Bool) {
        let readNow = watching.withLock { state -> Bool in
            guard !state.cancelled, state.reading != on else { return false }
            state.reading = on
            if on {
                state.read.resume()
                return state.readingStopped
            }
            state.read.suspend()
            state.readingStopped = true
            return false
        }
        if readNow { queue.async(execute: onReadable) }
    }

    /// Starts or stops calling `onWritable` while the socket is writable.
    func watchWritable(_ on: Bool) {
        watching.withLock { state in
            guard !state.cancelled, state.writing != on else { return }
            state.writing = on
            if on { state.write.resume() } else { state.write.suspend() }
        }
    }

    /// Stops watching; the socket closes once dispatch let go of it, unless `closing` is false
    /// (the socket is handed to another owner, which watches it with sources of its own).
    func cancel(closing: Bool = true) {
        if !closing { handedOver.set() }
        watching.withLock { state in
            guard !state.cancelled else { return }
            state.cancelled = true
            state.read.cancel()
            state.write.cancel()
            // Cancelled first: resumed, a source runs its cancel handler, not its events.
            if !state.reading { state.read.resume() }
            if !state.writing { state.write.resume() }
        }
    }
}
