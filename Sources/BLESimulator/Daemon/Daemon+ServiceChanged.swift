import BlueZ
import DBus
import Foundation

extension Daemon {
    /// A peer with a Service Changed characteristic (`2A05` in Generic Attribute `1801`)
    /// indicates changes of its database; bluetoothd confirms, rediscovers the range, removes
    /// the objects of the services that went or changed (children first, an
    /// `InterfacesRemoved` each), exports the new ones (`InterfacesAdded` in handle order) and
    /// announces the new `UUIDs`; `ServicesResolved` stays true (bluez-dbus-api.md §4.1, §10.10).
    /// A peer without one is not rediscovered: bluetoothd keeps its cache (stale until
    /// `RemoveDevice`). Returns whether the device's objects were brought up to date.
    @discardableResult
    func servicesChanged(_ state: inout SimState, _ path: ObjectPath) -> Bool {
        guard var device = state.devices[path], device.connected, let old = device.gatt,
            let record = state.peripherals[device.address], Self.indicatesServiceChanged(old),
            let new = try? record.layout(devicePath: path, claimed: profile.claimedServiceUUIDs)
        else { return false }
        let kept = Set(
            new.services.indices.filter { index in
                old.services.indices.contains(index) && old.services[index].exportsLike(new.services[index])
            })
        let gone = old.services.indices.filter { !kept.contains($0) }.map { old.services[$0] }
        guard !gone.isEmpty || new.services.count != kept.count else { return false }
        state.statistics.indicationsConfirmed += 1
        unexportServices(gone)
        device.gatt = new
        device.tickers.removeAll()
        state.devices[path] = device
        exportGatt(new, record, device: path, skipping: kept)
        if state.stored.contains(device.address) { state.storedServices[device.address] = new.serviceUUIDs }
        let uuids = DBusValue.array(.string, new.serviceUUIDs.map { .string($0) })
        if connection.property("UUIDs", interface: BlueZInterface.device1, path: path) != uuids {
            emit(path, BlueZInterface.device1, set: [("UUIDs", uuids)])
        }
        return true
    }

    /// Whether the peer's database has the Service Changed characteristic, which indicates.
    static func indicatesServiceChanged(_ layout: GattLayout) -> Bool {
        let gatt = BlueZUUID.canonical("1801")
        let changed = BlueZUUID.canonical("2A05")
        return layout.services.contains { service in
            service.uuid == gatt
                && service.characteristics.contains { $0.uuid == changed && $0.flags.contains("indicate") }
        }
    }
}

extension GattLayout.Service {
    /// Same objects with the same meaning: paths, UUIDs, flags and descriptors.
    func exportsLike(_ other: Self) -> Bool {
        guard path == other.path, uuid == other.uuid, primary == other.primary, includes == other.includes,
            characteristics.count == other.characteristics.count
        else { return false }
        return zip(characteristics, other.characteristics).allSatisfy { mine, theirs in
            mine.path == theirs.path && mine.uuid == theirs.uuid && mine.flags == theirs.flags
                && mine.descriptors.map(\.path) == theirs.descriptors.map(\.path)
                && mine.descriptors.map(\.uuid) == theirs.descriptors.map(\.uuid)
        }
    }
}
