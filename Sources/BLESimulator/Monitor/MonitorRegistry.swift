import BlueZ
import DBus
import Foundation

/// The advertisement monitors applications registered (`AdvertisementMonitorManager1`),
/// the simulator's passive scanning.
struct MonitorRegistry: Sendable {
    /// One monitor bluetoothd activated: where it lives, what it matches, whom it was told of.
    struct Monitor: Sendable {
        var path: ObjectPath
        var properties: AdvertisementMonitorProperties
        /// Advertisers already reported with `DeviceFound`.
        var found: Set<BluetoothAddress> = []
    }

    /// The daemon generation the registrations belong to: a restarted bluetoothd forgets them.
    var generation = 0
    /// Active monitors by registration (adapter, owner, root).
    var active: [RegistrationKey: [Monitor]] = [:]
    /// Registrations whose monitors are still being read.
    var pending: Set<RegistrationKey> = []
    /// When each adapter's first active monitor began to listen (monotonic ns).
    var listeningSince: [Int: UInt64] = [:]

    /// Drops registrations of an earlier daemon lifetime (reset lazily, as ``ServerState`` is).
    mutating func adopt(generation: Int) {
        guard generation != self.generation else { return }
        self = MonitorRegistry()
        self.generation = generation
    }

    /// Whether `adapter` has an active monitor, so that it hears advertisements without discovery.
    func isListening(adapter: Int) -> Bool { listeningSince[adapter] != nil }

    /// Drops the registrations `remove` picks; `listeningSince` follows.
    mutating func remove(where remove: (RegistrationKey) -> Bool) {
        for key in Array(active.keys) where remove(key) { active[key] = nil }
        pending = pending.filter { !remove($0) }
        for adapter in Array(listeningSince.keys) where !active.contains(where: { $0.key.adapter == adapter }) {
            listeningSince[adapter] = nil
        }
    }

    /// The monitors of `adapter` that match an advertiser's AD structures and have not reported
    /// it yet; they are marked as having reported it.
    mutating func newlyMatching(
        adapter: Int, address: BluetoothAddress, structures: [(type: UInt8, data: Data)]
    ) -> [(owner: BusName, path: ObjectPath)] {
        var matching: [(BusName, ObjectPath)] = []
        for key in active.keys.sorted(by: { $0.path.rawValue < $1.path.rawValue }) where key.adapter == adapter {
            guard var monitors = active[key] else { continue }
            for index in monitors.indices where !monitors[index].found.contains(address) {
                let hit = monitors[index].properties.patterns.contains { pattern in
                    structures.contains { pattern.matches(type: $0.type, data: $0.data) }
                }
                if hit {
                    monitors[index].found.insert(address)
                    matching.append((key.owner, monitors[index].path))
                }
            }
            active[key] = monitors
        }
        return matching
    }

    /// Whether any monitor of `adapter` matches the AD structures (reported before or not).
    func matchesAny(adapter: Int, structures: [(type: UInt8, data: Data)]) -> Bool {
        active.contains { key, monitors in
            key.adapter == adapter
                && monitors.contains { monitor in
                    monitor.properties.patterns.contains { pattern in
                        structures.contains { pattern.matches(type: $0.type, data: $0.data) }
                    }
                }
        }
    }
}
