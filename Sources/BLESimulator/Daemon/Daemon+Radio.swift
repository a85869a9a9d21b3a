import BlueZ
import DBus
import Foundation

extension Daemon {
    /// The simulated radio's housekeeping: temporary devices not seen for `TemporaryTimeout`
    /// go. Scanning has its own ticker (``startScanTicker(_:)``), running only while some
    /// adapter discovers, so an idle simulator does not wake up every scan tick.
    func startRadio() {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                guard let self else { return }
                let now = MonotonicNanos.now()
                // Reports due first: a stalled scan ticker must not let a device seem gone.
                _ = self.deliverAdvertisements(now: now, fromTicker: false)
                self.expireTemporaryDevices(now: now)
            }
        }
        addTask(task)
    }

    /// Starts delivering advertisements every scan tick, unless a ticker already runs; it
    /// stops by itself once no adapter discovers. Called with the state locked.
    func startScanTicker(_ state: inout SimState) {
        guard !scanTicking.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let tick = options.scanTick
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                guard let self, self.deliverAdvertisements(now: MonotonicNanos.now(), fromTicker: true) else { return }
            }
        }
        addTask(task)
    }

    /// Delivers the advertisements due by `now` to the adapters that scan. Nobody scanning,
    /// nothing is done: the schedule waits, and events missed meanwhile are skipped in phase
    /// when scanning resumes (``AdvertisingSchedule/nextDue(after:intervalMs:now:)``).
    /// Returns whether the ticker should go on (some adapter discovers); when it returns
    /// false to the ticker, the ticker is marked stopped under the same lock that starts one.
    func deliverAdvertisements(now: UInt64, fromTicker: Bool) -> Bool {
        core.state.withLock { state in
            state.monitors.adopt(generation: generation)
            let monitors = state.monitors
            guard isCurrent(state),
                state.adapters.contains(where: { $0.discovering || monitors.isListening(adapter: $0.index) })
            else {
                if fromTicker { scanTicking.store(false, ordering: .releasing) }
                return false
            }
            let latency = MonotonicNanos.of(options.scanStartLatency)
            // An active advertisement monitor hears advertisements without discovery.
            let scanning = state.adapters.filter {
                ($0.discovering && now >= $0.discoveryStarted &+ latency) || monitors.isListening(adapter: $0.index)
            }
            guard !scanning.isEmpty else { return true }
            let due = state.advertising.takeDue(through: now)
            guard !due.isEmpty else { return true }
            let scans = scanning.map {
                ScanContext(
                    $0, sessions: state.discovery[$0.index] ?? [:], latency: latency,
                    monitoringSince: monitors.listeningSince[$0.index], daemon: self)
            }
            for entry in due {
                guard let record = state.peripherals[entry.address], record.definition.advertising,
                    record.nextAdvertisement == entry.due
                else { continue }
                let next = AdvertisingSchedule.nextDue(
                    after: entry.due, intervalMs: record.definition.advertisingIntervalMs, now: now)
                state.peripherals[entry.address]?.nextAdvertisement = next
                state.advertising.add(entry.address, due: next)
                // An event from before an adapter listened was not heard by it; one late only
                // because this tick ran late was (the controller queues reports).
                // An adapter does not hear its own advertising.
                for scan in scans where entry.due >= scan.listeningSince && scan.adapter.index != record.servedBy {
                    report(&state, record.definition, address: entry.address, scan: scan)
                }
            }
            return true
        }
    }

    /// What every report to one adapter in one tick shares: its sessions and their filters.
    struct ScanContext {
        var adapter: AdapterState
        var filtered: Bool
        var patterns: [String]
        var duplicates: Bool
        var sessions: [DiscoverySession]
        /// When the adapter's scan began to hear advertisements (monotonic ns).
        var listeningSince: UInt64

        init(
            _ adapter: AdapterState, sessions byClient: [BusName: DiscoverySession], latency: UInt64,
            monitoringSince: UInt64?, daemon: Daemon
        ) {
            self.adapter = adapter
            let discoveringSince = adapter.discovering ? adapter.discoveryStarted &+ latency : nil
            listeningSince = [discoveringSince, monitoringSince].compactMap { $0 }.min() ?? UInt64.max
            sessions = Array(byClient.values)
            filtered = sessions.contains { daemon.isFiltered($0.filter) }
            patterns = sessions.compactMap { $0.filter?.pattern }
            duplicates = sessions.contains { $0.filter?.duplicateData == true }
        }
    }

    /// One advertising report reaching one discovering adapter (`btd_adapter_device_found`).
    private func report(
        _ state: inout SimState, _ definition: VirtualPeripheral, address: BluetoothAddress, scan: ScanContext
    ) {
        let adapter = scan.adapter
        let sessions = scan.sessions
        let filtered = scan.filtered
        // Without a filtered discovery, LE advertisers lacking the discoverable flag get no
        // object (Q13); any client's Pattern replaces that rule by a prefix match
        // (`device_is_discoverable`).
        var discoverable = filtered || definition.discoverable
        if !scan.patterns.isEmpty {
            discoverable = scan.patterns.contains { matches($0, address: address, name: definition.name) }
        }
        // An advertisement a monitor matches is processed whether or not discovery would
        // take it (`btd_adapter_device_found` with an active monitor).
        // The AD structures are built only for an adapter with an active monitor: most reports
        // reach adapters without one.
        let structures = state.monitors.isListening(adapter: adapter.index) ? AdvertisingStructures.of(definition) : nil
        let monitored = structures.map { state.monitors.matchesAny(adapter: adapter.index, structures: $0) } ?? false
        guard (adapter.discovering && discoverable) || monitored else { return }
        let jitter = definition.rssiJitter > 0 ? Int16.random(in: -definition.rssiJitter...definition.rssiJitter) : 0
        let rssi = definition.rssi &+ jitter
        if filtered, !monitored, !sessions.contains(where: { Self.accepts($0.filter, definition, rssi: rssi) }) {
            return
        }
        state.statistics.advertisementsDelivered += 1
        guard let path = state.devicePath(address, adapter: adapter) else { return }
        defer {
            if monitored, let structures {
                reportToMonitors(&state, structures, address: address, path: path, adapter: adapter.index)
            }
        }
        guard var device = state.devices[path] else {
            try? addDevice(&state, definition, address: address, adapter: adapter, fromStorage: false, rssi: rssi)
            return
        }
        device.lastSeen = MonotonicNanos.now()
        device.seenThisDiscovery = true
        let duplicates = scan.duplicates
        var changes: [(String, DBusValue)] = []
        // RSSI changes below 8 dBm are not reported unless the discovery is filtered (§3.6).
        if let old = device.rssi {
            if rssi != old && (filtered || abs(Int(rssi) - Int(old)) >= 8) { changes.append(("RSSI", .int16(rssi))) }
        } else {
            changes.append(("RSSI", .int16(rssi)))
        }
        if changes.last?.0 == "RSSI" { device.rssi = rssi }
        if let power = definition.txPower, power != device.txPower {
            device.txPower = power
            changes.append(("TxPower", .int16(power)))
        }
        // Entries accumulate per key and change only when the bytes do; with DuplicateData the
        // dicts are cleared and refilled by every report that carries them (§3.6).
        var manufacturerChanged = false
        if duplicates && !definition.manufacturerData.isEmpty {
            device.manufacturerData = definition.manufacturerData.mapValues(\.data)
            manufacturerChanged = true
        }
        for (id, data) in definition.manufacturerData where device.manufacturerData[id] != data.data {
            device.manufacturerData[id] = data.data
            manufacturerChanged = true
        }
        if manufacturerChanged && !device.manufacturerData.isEmpty {
            changes.append(("ManufacturerData", manufacturerValue(device.manufacturerData)))
        }
        var serviceChanged = false
        let advertisedServiceData = Self.serviceData(definition)
        if duplicates && !advertisedServiceData.isEmpty {
            device.serviceData = advertisedServiceData
            serviceChanged = true
        }
        for (uuid, data) in advertisedServiceData where device.serviceData[uuid] != data {
            device.serviceData[uuid] = data
            serviceChanged = true
        }
        if serviceChanged && !device.serviceData.isEmpty {
            changes.append(("ServiceData", serviceDataValue(device.serviceData)))
        }
        if profile.advertisingFlags {
            let flags = Self.advertisingFlags(definition)
            if connection.property("AdvertisingFlags", interface: BlueZInterface.device1, path: path) != flags {
                changes.append(("AdvertisingFlags", flags))
            }
            if let data = Self.advertisingData(definition),
                connection.property("AdvertisingData", interface: BlueZInterface.device1, path: path) != data
            {
                changes.append(("AdvertisingData", data))
            }
        }
        state.devices[path] = device
        if !changes.isEmpty { emit(path, BlueZInterface.device1, set: changes) }
    }

    /// Service data by canonical UUID.
    static func serviceData(_ definition: VirtualPeripheral) -> [String: Data] {
        Dictionary(
            definition.serviceData.compactMap { key, value in BlueZUUID.canonical(key).map { ($0, value.data) } },
            uniquingKeysWith: { _, last in last })
    }

    /// Whether a session's filter makes the discovery "filtered" (`merge_discovery_filters`):
    /// 5.66 counts any filter; from 5.67 a filter that asks for nothing beyond a regular scan
    /// of the adapter's transports does not count.
    func isFiltered(_ filter: DiscoveryFilter?) -> Bool {
        guard let filter else { return false }
        guard profile.regularDiscoveryForDefaultFilters else { return true }
        let transportDefault = filter.transport == nil || filter.transport == .auto
        return !(filter.uuids ?? []).isEmpty || filter.rssi != nil || filter.pathloss != nil || !transportDefault
            || filter.duplicateData == true || filter.pattern != nil
    }

    /// A Pattern's prefix match on the address (case-insensitive only in 5.87) or the name.
    private func matches(_ pattern: String, address: BluetoothAddress, name: String?) -> Bool {
        if pattern.isEmpty { return true }
        let text = address.description
        let byAddress =
            profile.patternIgnoresAddressCase
            ? text.lowercased().hasPrefix(pattern.lowercased()) : text.hasPrefix(pattern)
        return byAddress || (name?.hasPrefix(pattern) ?? false)
    }

    /// `is_filter_match` for one session's filter (a session without one accepts everything).
    static func accepts(_ filter: DiscoveryFilter?, _ definition: VirtualPeripheral, rssi: Int16) -> Bool {
        guard let filter else { return true }
        if filter.transport == .bredr { return false }
        if let uuids = filter.uuids, !uuids.isEmpty {
            let wanted = Set(uuids.compactMap(BlueZUUID.canonical))
            let advertised = Set(definition.serviceUUIDs.compactMap(BlueZUUID.canonical))
            if wanted.isDisjoint(with: advertised) { return false }
        }
        if let threshold = filter.rssi, rssi < threshold { return false }
        if let pathloss = filter.pathloss {
            guard let power = definition.txPower, Int(power) - Int(rssi) <= Int(pathloss) else { return false }
        }
        return true
    }

    func expireTemporaryDevices(now: UInt64) {
        let timeout = MonotonicNanos.of(options.temporaryTimeout)
        guard timeout > 0 else { return }
        core.state.withLock { state in
            guard isCurrent(state) else { return }
            // Sorting only the expired keeps a sweep over 10,000 devices cheap.
            let expired = state.devices.values.filter { device in
                device.temporary && !device.connected && device.pendingConnects.isEmpty
                    && now > device.lastSeen &+ timeout
            }
            for path in expired.map(\.path).sorted() { removeDevice(&state, path) }
        }
    }
}
