import BlueZ
import DBus

/// The scans sharing one BlueZ discovery session, and what the adapter was last told (the
/// state of ``DiscoveryMachine``).
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
    /// Whether state restoration keeps its filter: the app's scans, not the SDK's own (a
    /// connect's targeted scan).
    var isApps = true
}

/// A scan waiting for discovery to start or stop for it.
typealias DiscoveryWaiter = CheckedContinuation<Result<Void, BLEError>, Never>

/// The shell around ``DiscoveryMachine``: callers wait on their own continuation, bluetoothd's
/// answers come back to the actor as events.
extension Central {
    /// Adds a scan; the first one starts discovery, later ones widen the filter.
    func addScan(_ request: ScanRequest) async throws(BLEError) -> UInt64 {
        let id = discovery.makeID()
        let refusal =
            state == .poweredOn
            ? nil
            : BLEError(state == .poweredOff ? .poweredOff : .bluetoothUnavailable, message: "cannot scan: \(state)")
        let site = session.diagnostics.willSuspend()
        let result = await withCheckedContinuation { (waiter: DiscoveryWaiter) in
            runDiscovery(discovery.add(id, request, waiter, refusal: refusal))
        }
        session.diagnostics.didResume(site)
        try result.get()
        if request.isApps { restoration?.scan(id, services: request.services) }
        return id
    }

    /// An id for a scan that needs no discovery (a passive one), from the same numbers.
    func makeScanID() -> UInt64 { discovery.makeID() }

    /// How a running scan is ended when its discovery cannot be brought back (see
    /// ``DiscoveryMachine/Action/fail(_:_:)``); dropped when the scan leaves.
    func setScanEnder(_ id: UInt64, _ end: @escaping @Sendable (BLEError) -> Void) {
        scanEnders[id] = end
    }

    /// Removes a scan; the last one leaving stops discovery.
    func removeScan(_ id: UInt64) async {
        scanEnders[id] = nil
        restoration?.scan(id, services: nil)
        let site = session.diagnostics.willSuspend()
        _ = await withCheckedContinuation { (waiter: DiscoveryWaiter) in
            runDiscovery(discovery.remove(id, waiter))
        }
        session.diagnostics.didResume(site)
    }

    /// Whether `event` (a signal bluetoothd numbered `serial`) says the adapter stopped
    /// discovering while this central's discovery should run: then discovery is started again
    /// (see ``DiscoveryMachine/stoppedUnderUs(serial:adapterDiscovering:)``).
    func discoveryMayHaveStopped(_ event: ObjectTreeEvent, serial: UInt32) {
        guard case .propertiesChanged(let path, let interface, let changed, _) = event, path == adapterPath,
            interface == BlueZInterface.adapter1, changed[AdapterProperties.Key.discovering] == .boolean(false),
            state == .poweredOn, discovery.mayHaveStoppedUnderUs(serial: serial)
        else { return }
        runDiscovery(discovery.stoppedUnderUs(serial: serial, adapterDiscovering: adapterDiscovering()))
    }

    private func adapterDiscovering() -> Bool {
        let adapterPath = self.adapterPath
        return session.read { $0.properties(at: adapterPath, interface: BlueZInterface.adapter1) }?[
            AdapterProperties.Key.discovering] == .boolean(true)
    }

    private func runDiscovery(_ actions: [DiscoveryMachine<DiscoveryWaiter>.Action]) {
        for action in actions {
            switch action {
            case .resume(let waiter, let result):
                waiter.resume(returning: result)
            case .fail(let ids, let error):
                for id in ids { scanEnders.removeValue(forKey: id)?(error) }
            case .send(let call):
                if call == .restart {
                    session.logger.log(.info, "bluetoothd stopped the discovery under this central; starting it again")
                }
                send(call)
            }
        }
    }

    private func send(_ call: DiscoveryMachine<DiscoveryWaiter>.Call) {
        let member: MemberName
        var arguments: [DBusValue] = []
        switch call {
        case .setFilter(let filter):
            member = BlueZMethod.setDiscoveryFilter
            arguments = [
                .dictionary(
                    key: .string, value: .variant,
                    filter.keys.sorted().map {
                        DBusDictionaryEntry(.string($0), .variant(filter[$0] ?? .boolean(false)))
                    })
            ]
        case .start: member = BlueZMethod.startDiscovery
        case .stop, .restart: member = BlueZMethod.stopDiscovery
        }
        session.startCall(adapterPath, BlueZInterface.adapter1, member, arguments, timeout: session.callTimeout) {
            [weak self] result in
            guard let self else { return }
            Task(executorPreference: self.session.connection.executor) {
                await self.discoveryCallFinished(result.map { _ in () }, serial: try? result.get().serial)
            }
        }
    }

    private func discoveryCallFinished(_ result: Result<Void, BLEError>, serial: UInt32?) {
        if case .failure(let error) = result { session.logger.log(.debug, "discovery call failed: \(error)") }
        runDiscovery(discovery.finished(result, serial: serial, adapterDiscovering: adapterDiscovering()))
    }
}
