import BlueZ
import DBus

/// The scans sharing one BlueZ discovery session, and what the adapter was last told.
///
/// BlueZ keeps one discovery session and one filter per bus connection, so concurrent scans
/// of a central merge their filters; each scan then filters its own results client-side.
struct DiscoverySessions {
    var scans: [UInt64: ScanRequest] = [:]
    var running = false
    var appliedFilter: [String: DBusValue]?
    /// The serial bluetoothd gave its answer to this central's last StartDiscovery (nil when
    /// unknown): which `Discovering=false` came after it.
    var startSerial: UInt32?
    /// An async mutex: start/stop/filter changes must not interleave across awaits.
    var busy = false
    var waiters: [CheckedContinuation<Void, Never>] = []
    var nextID: UInt64 = 1

    /// The SetDiscoveryFilter dictionary for the current scans: the union of their service
    /// UUIDs (none if any scan wants all), the lowest RSSI threshold, duplicates if any wants
    /// them, and the widest transport.
    var mergedFilter: [String: DBusValue] {
        var filter: [String: DBusValue] = [:]
        let requests = Array(scans.values)
        if !requests.isEmpty, requests.allSatisfy({ !$0.services.isEmpty }) {
            let uuids = Set(requests.flatMap(\.services).map(\.uuidString)).sorted()
            filter[DiscoveryFilter.Key.uuids] = .array(.string, uuids.map { .string($0) })
        }
        let thresholds = requests.map(\.options.rssiThreshold)
        if !thresholds.isEmpty, thresholds.allSatisfy({ $0 != nil }) {
            filter[DiscoveryFilter.Key.rssi] = .int16(thresholds.compactMap { $0 }.min() ?? -127)
        }
        let transports = Set(requests.map(\.options.transport))
        let transport: ScanOptions.Transport =
            transports.count > 1 || transports.contains(.auto) ? .auto : (transports.first ?? .le)
        filter[DiscoveryFilter.Key.transport] = .string(transport.rawValue)
        filter[DiscoveryFilter.Key.duplicateData] = .boolean(requests.contains { $0.options.allowDuplicates })
        return filter
    }
}

/// One scan's wishes.
struct ScanRequest: Sendable {
    var services: [BluetoothUUID]
    var options: ScanOptions
}

extension Central {
    func lockDiscovery() async {
        while discovery.busy {
            let site = session.diagnostics.willSuspend()
            defer { session.diagnostics.didResume(site) }
            await withCheckedContinuation { discovery.waiters.append($0) }
        }
        discovery.busy = true
    }

    func unlockDiscovery() {
        discovery.busy = false
        if !discovery.waiters.isEmpty { discovery.waiters.removeFirst().resume() }
    }

    /// Adds a scan; the first one starts discovery, later ones widen the filter.
    func addScan(_ request: ScanRequest) async throws(BLEError) -> UInt64 {
        await lockDiscovery()
        defer { unlockDiscovery() }
        let id = discovery.nextID
        discovery.nextID += 1
        discovery.scans[id] = request
        do {
            try await applyDiscovery()
        } catch {
            discovery.scans[id] = nil
            throw error
        }
        return id
    }

    /// Removes a scan; the last one leaving stops discovery.
    func removeScan(_ id: UInt64) async {
        await lockDiscovery()
        defer { unlockDiscovery() }
        guard discovery.scans.removeValue(forKey: id) != nil else { return }
        try? await applyDiscovery()
    }

    private func applyDiscovery() async throws(BLEError) {
        if discovery.scans.isEmpty {
            guard discovery.running else { return }
            discovery.running = false
            discovery.appliedFilter = nil
            do {
                _ = try await session.call(adapterPath, BlueZInterface.adapter1, BlueZMethod.stopDiscovery)
            } catch  where error.code == .failed || error.code == .poweredOff || error.code == .bluetoothUnavailable {
                // Already stopped by power-off or a restart: nothing left to stop.
            }
            return
        }
        guard state == .poweredOn else {
            throw BLEError(state == .poweredOff ? .poweredOff : .bluetoothUnavailable, message: "cannot scan: \(state)")
        }
        let filter = discovery.mergedFilter
        if filter != discovery.appliedFilter {
            _ = try await session.call(
                adapterPath, BlueZInterface.adapter1, BlueZMethod.setDiscoveryFilter,
                [
                    .dictionary(
                        key: .string, value: .variant,
                        filter.keys.sorted().map {
                            DBusDictionaryEntry(.string($0), .variant(filter[$0] ?? .boolean(false)))
                        })
                ])
            discovery.appliedFilter = filter
        }
        guard !discovery.running else { return }
        do {
            let reply = try await session.call(adapterPath, BlueZInterface.adapter1, BlueZMethod.startDiscovery)
            discovery.startSerial = reply.serial
        } catch  where error.code == .inProgress {
            // This connection already has a session (e.g. started before a state glitch).
            discovery.startSerial = nil
        }
        discovery.running = true
    }

    /// Whether `event` (a signal bluetoothd numbered `serial`) says the adapter stopped
    /// discovering while this central's discovery should run, after bluetoothd answered its
    /// StartDiscovery. One from before that answer is ignored: a client that had set a filter
    /// leaving while the start was pending (`discovery_disconnect`'s idle branch), which the
    /// start's own `Discovering=true` follows.
    func discoveryStoppedUnderUs(_ event: ObjectTreeEvent, serial: UInt32) -> Bool {
        guard case .propertiesChanged(let path, let interface, let changed, _) = event, path == adapterPath,
            interface == BlueZInterface.adapter1, changed[AdapterProperties.Key.discovering] == .boolean(false),
            serial != 0, discovery.running, state == .poweredOn
        else { return false }
        return discovery.startSerial.map { PropertyRefreshes.isOlder($0, than: serial) } ?? true
    }

    /// Restarts a discovery bluetoothd stopped under this central (see
    /// ``discoveryStoppedUnderUs(_:serial:)``): a client that had set a filter leaving while
    /// this one discovered alone makes `discovery_stop` stop the kernel's discovery (BlueZ
    /// 5.66 and later), and this central's session stays registered but hears nothing. The
    /// same client leaving in the idle phase of a discovery restart says `Discovering=false`
    /// too; restarting then is harmless. Nothing is done when the adapter is discovering again
    /// or a newer StartDiscovery was answered since.
    func reviveDiscovery(after serial: UInt32) async {
        await lockDiscovery()
        defer { unlockDiscovery() }
        guard discovery.running, !discovery.scans.isEmpty, state == .poweredOn,
            discovery.startSerial.map({ PropertyRefreshes.isOlder($0, than: serial) }) ?? true,
            (try? session.tree.adapter(at: adapterPath))??.discovering == false
        else { return }
        session.logger.log(.info, "bluetoothd stopped the discovery under this central; starting it again")
        discovery.running = false
        _ = try? await session.call(adapterPath, BlueZInterface.adapter1, BlueZMethod.stopDiscovery)
        do {
            try await applyDiscovery()
        } catch {
            session.logger.log(.info, "restarting the discovery failed: \(error)")
        }
    }
}
