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
        return Iterator(consumer: EventConsumer(buffer), handle: ScanHandle(task: task))
    }

    /// Yields discoveries; throws once, then ends.
    public struct Iterator: AsyncIteratorProtocol {
        let consumer: EventConsumer<Result<Discovery, BLEError>>
        let handle: ScanHandle

        /// The next discovery, `nil` when the scan ended (task cancelled).
        public mutating func next() async throws(BLEError) -> Discovery? {
            guard let result = await consumer.buffer.next() else { return nil }
            return try result.get()
        }

        /// The next discovery, on the caller's actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(BLEError) -> Discovery? {
            guard let result = await consumer.buffer.next() else { return nil }
            return try result.get()
        }
    }
}

/// Cancels the scan's task when the last iterator copy goes away.
final class ScanHandle: Sendable {
    let task: Task<Void, Never>
    init(task: Task<Void, Never>) { self.task = task }
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

    /// The body of one scan: listen first, then start discovery, then report.
    nonisolated func runScan(
        _ request: ScanRequest, into buffer: EventBuffer<Result<Discovery, BLEError>>,
        counters: ScanCounters
    ) async {
        let events = session.events(under: adapterPath)
        let scanID: UInt64
        do {
            scanID = try await addScan(request)
        } catch {
            buffer.yield(.failure(error))
            buffer.finish()
            return
        }
        // Ended from the central when discovery cannot be started again for it: the error goes
        // first, then the events stop, which ends the loop below.
        await setScanEnder(scanID) { error in
            buffer.yield(.failure(error))
            events.cancel()
        }
        var reporter = ScanReporter(request: request, adapter: adapterName)
        let emit: (Discovery) -> Void = { discovery in
            if case .dropped = buffer.yield(.success(discovery)) { counters.dropped.add(1, ordering: .relaxed) }
        }
        for path in session.tree.devicePaths(of: adapterPath) {
            if let discovery = reporter.consider(path, in: session.tree, advertised: true) { emit(discovery) }
        }
        loop: for await event in events {
            switch event {
            case .daemonGone:
                buffer.yield(.failure(session.unavailable))
                break loop
            case .tree(_, let changes, _):
                let tree = session.tree
                if !session.daemonStatus.present {
                    // The tree is reset (this event) before the session says bluetoothd left.
                    buffer.yield(.failure(session.unavailable))
                    break loop
                }
                // Only a change of the adapter itself can power it off: the adapter's
                // properties are not decoded for every advertisement.
                let adapterChanged = changes.contains { $0.path == adapterPath }
                if adapterChanged, (try? tree.adapter(at: adapterPath))??.powered != true {
                    buffer.yield(
                        .failure(BLEError(.poweredOff, message: "the adapter powered off during a scan")))
                    break loop
                }
                for change in changes where change.interface == BlueZInterface.device1 {
                    switch change {
                    case .added(let path, _):
                        if let discovery = reporter.consider(path, in: tree, advertised: true) { emit(discovery) }
                    case .changed(let path, _, let keys, _):
                        // Invalidation alone (RSSI gone at StopDiscovery) is no advertisement (Q9).
                        let advertised = !Set(keys).isDisjoint(with: ScanReporter.advertisementKeys)
                        if advertised, let discovery = reporter.consider(path, in: tree, advertised: true) {
                            emit(discovery)
                        }
                    case .removed(let path, _):
                        reporter.forget(path)
                    }
                }
            default:
                continue
            }
        }
        buffer.finish()
        // Scans end by cancellation: leave the discovery from a task that is not cancelled,
        // or StopDiscovery would never be sent.
        await Task(executorPreference: session.connection.executor) { await self.removeScan(scanID) }.value
    }
}

/// Decides which device changes a scan reports (its client-side filter and duplicate rule).
struct ScanReporter {
    let request: ScanRequest
    let adapter: String
    private var reported: [ObjectPath: AdvertisementData] = [:]

    static let advertisementKeys: Set<String> = [
        "RSSI", "ManufacturerData", "ServiceData", "TxPower", "Name", "UUIDs", "AdvertisingData", "Appearance",
    ]

    init(request: ScanRequest, adapter: String) {
        self.request = request
        self.adapter = adapter
    }

    mutating func consider(_ path: ObjectPath, in tree: BlueZObjectTree, advertised: Bool) -> Discovery? {
        guard advertised, let device = try? tree.advertisement(at: path), let rssi = device.rssi else { return nil }
        let advertisement = AdvertisementData(device)
        if !request.services.isEmpty && Set(advertisement.serviceUUIDs).isDisjoint(with: request.services) {
            return nil
        }
        if let threshold = request.options.rssiThreshold, rssi < threshold { return nil }
        if let prefix = request.options.namePrefix, !(advertisement.localName?.hasPrefix(prefix) ?? false) {
            return nil
        }
        // Stored and compared in one look-up: this runs for every advertisement.
        if let previous = reported.updateValue(advertisement, forKey: path), !request.options.allowDuplicates,
            previous == advertisement
        {
            return nil
        }
        return Discovery(
            id: PeripheralID(adapter: adapter, bluetoothAddress: device.address), rssi: rssi,
            advertisement: advertisement, timestamp: Date())
    }

    mutating func forget(_ path: ObjectPath) { reported[path] = nil }
}
