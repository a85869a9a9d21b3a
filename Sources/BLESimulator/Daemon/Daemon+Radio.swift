import BlueZ
import DBus
import Foundation

extension Daemon {
    /// The simulated radio: while an adapter is discovering, due advertisements are delivered
    /// every scan tick; temporary devices not seen for `TemporaryTimeout` go.
    func startRadio() {
        let tick = options.scanTick
        let task = Task { [weak self] in
            var lastSweep: UInt64 = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                guard let self else { return }
                let now = MonotonicNanos.now()
                self.deliverAdvertisements(now: now)
                if now &- lastSweep > 250_000_000 {
                    lastSweep = now
                    self.expireTemporaryDevices(now: now)
                }
            }
        }
        addTask(task)
    }

    func deliverAdvertisements(now: UInt64) {
        core.state.withLock { state in
            guard isCurrent(state) else { return }
            let latency = MonotonicNanos.of(options.scanStartLatency)
            let scanning = state.adapters.filter { $0.discovering && now >= $0.discoveryStarted &+ latency }
            guard !scanning.isEmpty else { return }
            for address in Array(state.peripherals.keys) {
                guard var record = state.peripherals[address], record.definition.advertising,
                    record.nextAdvertisement <= now
                else { continue }
                let interval = UInt64(max(1, record.definition.advertisingIntervalMs)) * 1_000_000
                record.nextAdvertisement = now &+ interval
                state.peripherals[address] = record
                for adapter in scanning { report(&state, record.definition, address: address, adapter: adapter) }
            }
        }
    }

    /// One advertising report reaching one discovering adapter (`btd_adapter_device_found`).
    private func report(
        _ state: inout SimState, _ definition: VirtualPeripheral, address: BluetoothAddress, adapter: AdapterState
    ) {
        let sessions = Array((state.discovery[adapter.index] ?? [:]).values)
        let filtered = sessions.contains { isFiltered($0.filter) }
        // Without a filtered discovery, LE advertisers lacking the discoverable flag get no
        // object (Q13); any client's Pattern replaces that rule by a prefix match
        // (`device_is_discoverable`).
        var discoverable = filtered || definition.discoverable
        let patterns = sessions.compactMap { $0.filter?.pattern }
        if !patterns.isEmpty {
            discoverable = patterns.contains { matches($0, address: address, name: definition.name) }
        }
        guard discoverable else { return }
        let jitter = definition.rssiJitter > 0 ? Int16.random(in: -definition.rssiJitter...definition.rssiJitter) : 0
        let rssi = definition.rssi &+ jitter
        if filtered, !sessions.contains(where: { Self.accepts($0.filter, definition, rssi: rssi) }) { return }
        state.statistics.advertisementsDelivered += 1
        guard let path = try? BlueZPath.device(address, adapter: adapter.path) else { return }
        guard var device = state.devices[path] else {
            try? addDevice(&state, definition, address: address, adapter: adapter, fromStorage: false, rssi: rssi)
            return
        }
        device.lastSeen = MonotonicNanos.now()
        device.seenThisDiscovery = true
        let duplicates = sessions.contains { $0.filter?.duplicateData == true }
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
            for path in state.devices.keys.sorted() {
                guard let device = state.devices[path], device.temporary, !device.connected,
                    device.pendingConnects.isEmpty, now > device.lastSeen &+ timeout
                else { continue }
                removeDevice(&state, path)
            }
        }
    }
}
