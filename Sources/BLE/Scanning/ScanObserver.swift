import BlueZ
import DBus
import Foundation

/// One scan's reporting, done as the session applies each change of the adapter's subtree: on
/// the I/O thread, right after the mirror took it, a device's advertisement goes through the
/// scan's filter and duplicate rule (``ScanReporter``) into the consumer's buffer, with no
/// session buffer, task or copy of the mirror per advertisement in between.
///
/// It reports the devices the mirror holds when the scan starts (``start()``), then every
/// change after; a change that came in between is in the mirror the start reads, and the
/// duplicate rule keeps it from being reported twice. It ends once (``end(with:)``): with an
/// error for the consumer (the adapter powering off, bluetoothd or the bus leaving, discovery
/// that cannot be started again), or without one when the consumer left.
final class ScanObserver: SessionObserver {
    private struct State {
        var reporter: ScanReporter
        var started = false
        var ended = false
    }

    private let state: PosixMutex<State>
    private let adapterPath: ObjectPath
    private let session: BlueZSession
    private let buffer: EventBuffer<Result<Discovery, BLEError>>
    private let counters: ScanCounters
    /// Resumed once the scan has ended, for the task that stops discovery.
    let ended: OnceSlot<Void>

    init(
        request: ScanRequest, adapter: String, adapterPath: ObjectPath, session: BlueZSession,
        buffer: EventBuffer<Result<Discovery, BLEError>>, counters: ScanCounters
    ) {
        // The adapter's address is read once: it does not change while the adapter is there.
        let identity = session.adapterIdentity(name: adapter, at: adapterPath)
        state = PosixMutex(State(reporter: ScanReporter(request: request, adapter: identity)))
        self.adapterPath = adapterPath
        self.session = session
        self.buffer = buffer
        self.counters = counters
        ended = OnceSlot(diagnostics: session.diagnostics)
    }

    /// Reports the devices the mirror holds now, and from now on every change.
    func start() {
        let adapterPath = self.adapterPath
        state.withLock { state in
            guard !state.ended else { return }
            state.started = true
            // Decided under the mirror's lock, handed over after it.
            let now = Date()
            let discoveries = session.read { tree in
                tree.devicePaths(of: adapterPath).compactMap { state.reporter.consider($0, in: tree, at: now) }
            }
            for discovery in discoveries { emit(discovery) }
        }
    }

    /// bluetoothd's advertisement monitor found the device at `path` (a passive scan): it is
    /// reported unless its advertisement was already (the duplicate rule).
    func deviceFound(_ path: ObjectPath) {
        state.withLock { state in
            guard state.started, !state.ended else { return }
            let now = Date()
            let discovery = session.read { state.reporter.consider(path, in: $0, at: now) }
            if let discovery { emit(discovery) }
        }
    }

    /// Ends the scan: `error` (if any) goes to the consumer first. Only the first end counts.
    func end(with error: BLEError?) {
        let first = state.withLock { state in
            defer { state.ended = true }
            return !state.ended
        }
        guard first else { return }
        if let error { buffer.yield(.failure(error)) }
        ended.finish(.success(()))
    }

    func sessionEnded() { end(with: nil) }

    func sessionEvent(_ event: SessionEvent) {
        switch event {
        case .daemonGone:
            end(with: session.unavailable)
        case .tree(_, let changes, _):
            guard session.daemonStatus.present else {
                // The tree is reset (this event) before the session says bluetoothd left.
                end(with: session.unavailable)
                return
            }
            // Only a change of the adapter itself can power it off: the adapter's properties
            // are not decoded for every advertisement.
            let adapterPath = self.adapterPath
            if changes.contains(where: { $0.path == adapterPath }),
                session.read({ (try? $0.adapter(at: adapterPath)) ?? nil })?.powered != true
            {
                end(with: BLEError(.poweredOff, message: "the adapter powered off during a scan"))
                return
            }
            report(changes)
        case .daemonBack, .signal:
            return
        }
    }

    /// Runs the device changes among `changes` through the reporter.
    private func report(_ changes: [ObjectTreeChange]) {
        guard changes.contains(where: { $0.interface == BlueZInterface.device1 }) else { return }
        state.withLock { state in
            guard state.started, !state.ended else { return }
            // Decided under the mirror's lock, handed over after it. An advertiser's signal
            // changes one device: its discovery is held without an array (made, filled and
            // freed for every advertisement otherwise).
            let now = Date()
            var first: Discovery?
            var more: [Discovery] = []
            session.read { tree in
                for change in changes where change.interface == BlueZInterface.device1 {
                    guard let discovery = Self.decide(change, with: &state.reporter, in: tree, at: now) else {
                        continue
                    }
                    if first == nil { first = discovery } else { more.append(discovery) }
                }
            }
            if let first { emit(first) }
            for discovery in more { emit(discovery) }
        }
    }

    /// What `reporter` makes of one change of a device.
    private static func decide(
        _ change: ObjectTreeChange, with reporter: inout ScanReporter, in tree: BlueZObjectTree, at now: Date
    ) -> Discovery? {
        switch change {
        case .added(let path, _):
            return reporter.consider(path, in: tree, at: now)
        case .changed(let path, _, let keys, let invalidated):
            // Invalidation alone (RSSI gone at StopDiscovery) is no advertisement (Q9).
            guard keys.contains(where: { ScanReporter.advertisementKeys.contains($0) }) else { return nil }
            return reporter.changed(path, keys: keys, invalidated: invalidated, in: tree, at: now)
        case .removed(let path, _):
            reporter.forget(path)
            return nil
        }
    }

    private func emit(_ discovery: Discovery) {
        if case .dropped = buffer.yield(.success(discovery)) { counters.dropped.add(1, ordering: .relaxed) }
    }
}
