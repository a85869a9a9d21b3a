import DBus
import Dispatch
import Synchronization

/// A socket watched for readability and writability by two dispatch sources on one serial
/// queue: epoll, no thread blocked per socket and no polling. It is closed (and counted in
/// ``BLEDiagnostics``) only once both sources are cancelled, so neither ever watches a number
/// the process has reused.
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
        var writing = false
        var cancelled = false
    }

    private let watching: PosixMutex<Watch>
    /// Set when the socket is handed over: then it is not closed once dispatch let go of it.
    private let handedOver = StopFlag()

    init(
        _ descriptor: FileDescriptor, diagnostics: BLEDiagnostics?, onReadable: @escaping @Sendable () -> Void,
        onWritable: @escaping @Sendable () -> Void
    ) {
        self.descriptor = descriptor
        queue = DispatchQueue(label: "swift-ble.l2cap", target: Self.sharedTarget)
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
    private static let sharedTarget = DispatchQueue(label: "swift-ble.l2cap.io", attributes: .concurrent)

    /// Starts or stops calling `onReadable` while the socket is readable.
    func watchReadable(_ on: Bool) {
        watching.withLock { state in
            guard !state.cancelled, state.reading != on else { return }
            state.reading = on
            if on { state.read.resume() } else { state.read.suspend() }
        }
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
