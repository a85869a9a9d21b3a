import BlueZ
import DBus
import Foundation
import Synchronization

/// The discoveries of one scan: an `AsyncSequence` that throws ``BLEError``.
///
/// Iterating starts the scan (sharing the adapter's discovery with other scans of the same
/// central); leaving the loop or cancelling the task stops it, and the last scan leaving
/// stops discovery. It fails with ``BLEError/Code/poweredOff`` when the adapter powers off
/// and ``BLEError/Code/bluetoothUnavailable`` when bluetoothd goes away.
///
/// Buffering: up to ``ScanOptions/bufferSize`` discoveries wait for a slow consumer; newer
/// ones are dropped and counted in ``droppedCount`` (a scan never slows the D-Bus thread).
public struct ScanSequence: AsyncSequence, Sendable {
    /// What each iteration step yields.
    public typealias Element = Discovery
    /// What an iteration can throw.
    public typealias Failure = BLEError

    let central: Central
    let request: ScanRequest
    let counters = ScanCounters()

    /// Discoveries dropped because the consumer fell behind (all iterations of this sequence).
    public var droppedCount: Int { counters.dropped.load(ordering: .relaxed) }

    /// Starts scanning.
    public func makeAsyncIterator() -> Iterator {
        let size = request.options.bufferSize ?? central.options.scanBufferSize
        let buffer = EventBuffer<Result<Discovery, BLEError>>(capacity: size)
        let central = self.central
        let request = self.request
        let counters = self.counters
        let task = Task(executorPreference: central.session.connection.executor) {
            await central.runScan(request, into: buffer, counters: counters)
        }
        // The scan may already have ended (it fails at once on an adapter that is off): the
        // termination then runs here, at once.
        central.session.diagnostics.track(buffer) { task.cancel() }
        return Iterator(handle: ScanHandle(task: task, consumer: EventConsumer(buffer)))
    }

    /// Yields discoveries; throws once, then ends.
    public struct Iterator: AsyncIteratorProtocol {
        let handle: ScanHandle

        /// The next discovery, `nil` when the scan ended (task cancelled).
        public mutating func next() async throws(BLEError) -> Discovery? {
            guard let result = await handle.consumer.buffer.next() else { return nil }
            return try result.get()
        }

        // `nonsending` rather than `isolated` to the parameter: no executor switch in or out;
        // not `mutating`: no retain per value (see NotificationSequence.AsyncIterator).
        /// The next discovery, on the caller's executor.
        public nonisolated(nonsending) func next(
            isolation actor: (any Actor)?
        ) async throws(BLEError) -> Discovery? {
            guard let result = await handle.consumer.buffer.next() else { return nil }
            return try result.get()
        }
    }
}

/// Keeps a scan running while held: the iterator's copies hold it, and so does a connect that
/// found its device with a targeted scan, until its `Connect` is answered. The scan's task is
/// cancelled when the last holder goes.
///
/// It holds the consuming end (the iterator reads through it): a connect keeps the handle
/// alone, having stopped reading the discoveries, and the consumer leaving would end the
/// buffer and with it the scan: the discovery stopped before the `Connect` went out, and
/// bluetoothd dropped the device it had just created (a non-connectable one at once),
/// failing the connect with `notFound`.
final class ScanHandle: Sendable {
    let task: Task<Void, Never>
    /// The consuming end of the scan's buffer.
    let consumer: EventConsumer<Result<Discovery, BLEError>>

    init(task: Task<Void, Never>, consumer: EventConsumer<Result<Discovery, BLEError>>) {
        self.task = task
        self.consumer = consumer
    }

    deinit { task.cancel() }
}

/// Counters shared by a scan sequence's iterations.
final class ScanCounters: Sendable {
    let dropped = Atomic<Int>(0)
}

extension Central {
    /// Scans for advertising peripherals, optionally only those advertising `services`.
    ///
    /// ```swift
    /// for try await discovery in central.scan(services: [BluetoothUUID("180D")]) { … }
    /// ```
    public nonisolated func scan(services: [BluetoothUUID] = [], options: ScanOptions = ScanOptions()) -> ScanSequence {
        ScanSequence(central: self, request: ScanRequest(services: services, options: options))
    }

    /// The body of one scan: observe first, then start discovery, then report. The reporting
    /// itself is done by the session as it applies each change (``ScanObserver``); this task
    /// waits for the scan to end (the consumer leaves, or an error) and stops discovery.
    nonisolated func runScan(
        _ request: ScanRequest, into buffer: EventBuffer<Result<Discovery, BLEError>>,
        counters: ScanCounters
    ) async {
        let observer = ScanObserver(
            request: request, adapter: adapterName, adapterPath: adapterPath, session: session, buffer: buffer,
            counters: counters)
        let token = session.observe(under: adapterPath, observer)
        defer { session.stopObserving(token) }
        if request.options.passive { return await runPassiveScan(request, observer: observer, into: buffer) }
        let scanID: UInt64
        do {
            scanID = try await addScan(request)
        } catch {
            observer.end(with: error)
            buffer.finish()
            return
        }
        // Ended from the central when discovery cannot be started again for it.
        await setScanEnder(scanID) { error in observer.end(with: error) }
        await report(observer, into: buffer)
        // Scans end by cancellation: leave the discovery from a task that is not cancelled,
        // or StopDiscovery would never be sent.
        await Task(executorPreference: session.connection.executor) { await self.removeScan(scanID) }.value
    }

    /// A passive scan: an advertisement monitor instead of discovery (see
    /// ``ScanOptions/passive``), reported by the same observer.
    private nonisolated func runPassiveScan(
        _ request: ScanRequest, observer: ScanObserver, into buffer: EventBuffer<Result<Discovery, BLEError>>
    ) async {
        let monitor: PassiveScanMonitor
        do throws(BLEError) {
            let state = await self.state
            guard state == .poweredOn else {
                throw BLEError(
                    state == .poweredOff ? .poweredOff : .bluetoothUnavailable, message: "cannot scan: \(state)")
            }
            monitor = try await PassiveScanMonitor.start(
                request, adapterName: adapterName, adapterPath: adapterPath, session: session, observer: observer,
                timeout: session.callTimeout)
        } catch {
            observer.end(with: error)
            buffer.finish()
            return
        }
        let scanID = await makeScanID()
        if request.isApps { restoration?.scan(scanID, services: request.services, passive: true) }
        await report(observer, into: buffer)
        restoration?.scan(scanID, services: nil, passive: true)
        // Ended by cancellation: unregistered from a task that is not cancelled.
        await Task(executorPreference: session.connection.executor) { await monitor.stop() }.value
    }

    /// Reports through `observer` until the scan ends (the consumer left, or an error), then
    /// finishes the consumer's buffer.
    private nonisolated func report(
        _ observer: ScanObserver, into buffer: EventBuffer<Result<Discovery, BLEError>>
    ) async {
        observer.start()
        _ = await withTaskCancellationHandler {
            await observer.ended.wait()
        } onCancel: {
            observer.end(with: nil)
        }
        buffer.finish()
    }
}
