import DBus
import Dispatch
import Foundation

/// The shell around ``RestorationRecord``: the central, its peripherals and scans report what
/// the app does; each change that alters the record is written to the state file at once, on
/// a serial queue of its own: the changes come on the bus connection's I/O thread, which must
/// not wait for a file's fsync. Writes land in the order of the changes (the newest record
/// wins when several wait). A write that fails is
/// logged and tried again with the next change: the app's operation never fails for it.
final class RestorationRecorder: Sendable {
    private struct State {
        var record: RestorationRecord
        /// The filters of the scans running now, by scan id, and whether each is passive.
        var scans: [UInt64: (services: [String], passive: Bool)] = [:]
        /// Set when the central closes: what it ends then is kept as it was.
        var frozen = false
        /// The newest record not yet written.
        var unwritten: RestorationRecord?
    }

    let store: RestorationStore
    private let logger: BLELogger
    private let state: PosixMutex<State>
    private let writer = DispatchQueue(label: "swift-ble.restoration")

    init(store: RestorationStore, record: RestorationRecord, logger: BLELogger) {
        self.store = store
        self.logger = logger
        state = PosixMutex(State(record: record))
    }

    /// The record as it stands.
    var record: RestorationRecord { state.withLock { $0.record } }

    func connected(_ id: PeripheralID, policy: ReconnectPolicy) {
        update { $0.record.connected(id, policy: .init(policy)) }
    }

    func disconnected(_ id: PeripheralID) {
        update { $0.record.disconnected(id) }
    }

    func policyChanged(_ id: PeripheralID, to policy: ReconnectPolicy) {
        update { $0.record.policyChanged(id, to: .init(policy)) }
    }

    func subscription(_ subscription: RestorationRecord.Subscription, of id: PeripheralID, live: Bool) {
        update { $0.record.subscription(subscription, of: id, live: live) }
    }

    /// A scan started (`services` its filter) or ended (nil).
    func scan(_ scanID: UInt64, services: [BluetoothUUID]?, passive: Bool = false) {
        update { state in
            state.scans[scanID] = services.map { ($0.map(\.uuidString), passive) }
            // Several scans of a kind: one that wants every advertiser wins, else the union of
            // their filters.
            func merged(passive: Bool) -> [String]? {
                let filters = state.scans.values.filter { $0.passive == passive }.map(\.services)
                if filters.isEmpty { return nil }
                return filters.contains(where: \.isEmpty) ? [] : Set(filters.joined()).sorted()
            }
            let active = state.record.scanning(merged(passive: false))
            return state.record.scanning(merged(passive: true), passive: true) || active
        }
    }

    /// Takes no more changes, writes what waits and lets the identifier go: the central is closing.
    func freeze() {
        state.withLock { $0.frozen = true }
        writer.sync {}
        store.release()
    }

    private func update(_ change: (inout State) -> Bool) {
        let first = state.withLock { state -> Bool in
            guard !state.frozen, change(&state) else { return false }
            defer { state.unwritten = state.record }
            return state.unwritten == nil
        }
        if first { writer.async { self.writeUnwritten() } }
    }

    private func writeUnwritten() {
        guard let record = state.withLock({ $0.unwritten.take() }) else { return }
        do {
            try store.save(record)
        } catch {
            logger.log(
                .warning, "could not keep the central's state for restoration",
                metadata: ["identifier": store.identifier, "error": "\(error)"])
        }
    }
}
