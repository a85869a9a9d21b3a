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
        let filtered = sessions.contains { $0.filter != nil }
        // Without any filter, LE advertisers lacking the discoverable flag get no object (Q13).
        if !filtered && !definition.discoverable { return }
        let jitter = definition.rssiJitter > 0 ? Int16.random(in: -definition.rssiJitter...definition.rssiJitter) : 0
        let rssi = definition.rssi &+ jitter
        guard sessions.contains(where: { Self.accepts($0.filter, definition, address: address, rssi: rssi) }) else {
            return
        }
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
        // RSSI changes below 8 dBm are not reported unless a filter is active (§3.6).
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
        var manufacturerChanged = duplicates
        for (id, data) in definition.manufacturerData where device.manufacturerData[id] != data.data {
            device.manufacturerData[id] = data.data
            manufacturerChanged = true
        }
        if manufacturerChanged && !device.manufacturerData.isEmpty {
            changes.append(("ManufacturerData", manufacturerValue(device.manufacturerData)))
        }
        var serviceChanged = duplicates
        for (key, data) in definition.serviceData {
            guard let uuid = BlueZUUID.canonical(key), device.serviceData[uuid] != data.data else { continue }
            device.serviceData[uuid] = data.data
            serviceChanged = true
        }
        if serviceChanged && !device.serviceData.isEmpty {
            changes.append(("ServiceData", serviceDataValue(device.serviceData)))
        }
        state.devices[path] = device
        if !changes.isEmpty { emit(path, BlueZInterface.device1, set: changes) }
    }

    /// `is_filter_match` for one session's filter (a session without one accepts everything).
    static func accepts(
        _ filter: DiscoveryFilter?, _ definition: VirtualPeripheral, address: BluetoothAddress, rssi: Int16
    ) -> Bool {
        guard let filter else { return true }
        if filter.transport == .bredr { return false }
        if let uuids = filter.uuids, !uuids.isEmpty {
            let wanted = Set(uuids.compactMap(BlueZUUID.canonical))
            let advertised = Set(
                (definition.serviceUUIDs + Array(definition.serviceData.keys)).compactMap(BlueZUUID.canonical))
            if wanted.isDisjoint(with: advertised) { return false }
        }
        if let threshold = filter.rssi, rssi < threshold { return false }
        if let pathloss = filter.pathloss {
            guard let power = definition.txPower, Int(power) - Int(rssi) <= Int(pathloss) else { return false }
        }
        if let pattern = filter.pattern, !pattern.isEmpty {
            let byAddress = address.description.hasPrefix(pattern)
            let byName = definition.name?.hasPrefix(pattern) ?? false
            if !byAddress && !byName { return false }
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
