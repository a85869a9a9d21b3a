import BlueZ
import DBus
import Dispatch

/// A channel being opened: the socket of ``L2CAPTransport/startConnect(_:)`` watched until it
/// turns writable (connected, or refused: ``L2CAPTransport/finishConnect(_:_:)`` tells), or
/// until the deadline, the task's cancellation or the link's loss, whichever comes first.
/// Ending any other way than ready closes the socket, which aborts the kernel's attempt.
final class L2CAPConnectAttempt: Sendable {
    private let slot: OnceSlot<Void>
    private let watched: WatchedSocket

    init(_ descriptor: FileDescriptor, diagnostics: BLEDiagnostics?) {
        let slot = OnceSlot<Void>(diagnostics: diagnostics)
        self.slot = slot
        watched = WatchedSocket(
            descriptor, diagnostics: diagnostics, onReadable: {}, onWritable: { slot.finish(.success(())) })
    }

    /// Waits for the first of: the socket ready, `deadline`, cancellation, ``linkLost()``.
    func wait(until deadline: ContinuousClock.Instant, psm: UInt16) async -> Result<Void, BLEError> {
        let slot = self.slot
        let timer = DispatchWorkItem {
            slot.finish(.failure(BLEError(.timeout, message: "the channel to PSM \(psm) did not open in time")))
        }
        let left = ContinuousClock.now.duration(to: deadline)
        let nanoseconds =
            left > .zero
            ? Int(left.components.seconds) * 1_000_000_000 + Int(left.components.attoseconds / 1_000_000_000) : 0
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: timer)
        defer { timer.cancel() }
        watched.watchWritable(true)
        let result = await withTaskCancellationHandler {
            await slot.wait()
        } onCancel: {
            slot.finish(.failure(BLEError(.cancelled, message: "opening the channel was cancelled")))
        }
        watched.watchWritable(false)
        return result
    }

    /// The link dropped while the channel was being opened.
    func linkLost() {
        slot.finish(.failure(BLEError(.disconnected, message: "the link dropped while the channel was being opened")))
    }

    /// Stops watching and closes the socket (once dispatch let go of it), unless the channel
    /// took it over (``handOver()``).
    func close() {
        watched.cancel()
    }

    /// Stops watching and leaves the socket open: a channel watches it from now on.
    func handOver() {
        watched.cancel(closing: false)
    }
}

/// The channels of one peripheral and the attempts to open them, told when its link drops:
/// a channel follows its link (``BLEError/Code/disconnected``). Channels are held weakly: the
/// app owns them.
final class L2CAPLinkTracker: Sendable {
    private struct Weak {
        weak var core: L2CAPChannelCore?
    }

    private let entries = PosixMutex((next: UInt64(1), attempts: [UInt64: L2CAPConnectAttempt](), channels: [Weak]()))

    func follow(_ attempt: L2CAPConnectAttempt) -> UInt64 {
        entries.withLock { entries in
            defer { entries.next += 1 }
            entries.attempts[entries.next] = attempt
            return entries.next
        }
    }

    func forget(_ attempt: UInt64) {
        entries.withLock { _ = $0.attempts.removeValue(forKey: attempt) }
    }

    func follow(_ channel: L2CAPChannelCore) {
        entries.withLock { entries in
            entries.channels.removeAll { $0.core?.isOpen != true }
            entries.channels.append(Weak(core: channel))
        }
    }

    func linkLost() {
        let (attempts, channels) = entries.withLock { entries in
            defer {
                entries.attempts.removeAll()
                entries.channels.removeAll()
            }
            return (Array(entries.attempts.values), entries.channels.compactMap(\.core))
        }
        for attempt in attempts { attempt.linkLost() }
        for channel in channels { channel.end(.linkLost) }
    }
}
