import BlueZ
import DBus
import Foundation

extension Daemon {
    /// bluetoothd's battery plugin (`profiles/battery/battery.c`) on a resolved device with a
    /// Battery Service: it reads Battery Level `2A19`, enables its notifications itself (not a
    /// D-Bus notify session: `Notifying` stays false), and once the CCC is written registers
    /// `org.bluez.Battery1` on the device, with `Percentage` from the value read (absent when
    /// over 100) and `Source` "GATT Battery Service". A level the peer cannot read or notify
    /// gets no interface. Both releases do this; 5.66 also exports the service's GATT objects.
    func attachBattery(_ state: inout SimState, _ path: ObjectPath) {
        guard var device = state.devices[path], device.batteryLevel == nil, let gatt = device.gatt,
            let record = state.peripherals[device.address]
        else { return }
        let battery = BlueZUUID.canonical("180F")
        let level = BlueZUUID.canonical("2A19")
        guard
            let characteristic = gatt.services.first(where: { $0.uuid == battery && $0.primary })?.characteristics
                .first(where: { $0.uuid == level }),
            characteristic.flags.contains("read"), characteristic.flags.contains("notify"),
            characteristic.definition.servesRead(on: device.bondSecurity)
        else { return }
        let value = record.values[valueKey(of: characteristic.path, in: gatt)] ?? Data()
        device.batteryLevel = characteristic.path
        state.devices[path] = device
        try? connection.export(
            [
                ExportedInterface(
                    BlueZInterface.battery1,
                    properties: [
                        Self.percentage(value).map { ExportedProperty("Percentage", value: .byte($0)) }
                            ?? ExportedProperty("Percentage", absentOf: .byte),
                        ExportedProperty("Source", value: .string("GATT Battery Service")),
                    ])
            ], at: path)
        startTicker(&state, characteristic.path)
    }

    /// A Battery Level notification reaching the plugin: `Percentage` changes when the level
    /// does (`parse_battery_level`, `btd_battery_update`).
    func batteryNotified(_ device: DeviceState, _ path: ObjectPath, _ value: Data) {
        guard device.batteryLevel == path, let percentage = Self.percentage(value),
            connection.property("Percentage", interface: BlueZInterface.battery1, path: device.path)
                != .byte(percentage)
        else { return }
        emit(device.path, BlueZInterface.battery1, set: [("Percentage", .byte(percentage))])
    }

    /// The link went: the plugin unregisters the battery (`batt_reset`), `InterfacesRemoved`.
    func detachBattery(_ state: inout SimState, _ path: ObjectPath) {
        guard state.devices[path]?.batteryLevel != nil else { return }
        state.devices[path]?.batteryLevel = nil
        connection.unexport(path, interfaces: [BlueZInterface.battery1])
    }

    /// The first byte, when it is a percentage (`BATTERY_MAX_PERCENTAGE` is 100).
    private static func percentage(_ value: Data) -> UInt8? {
        guard let first = value.first, first <= 100 else { return nil }
        return first
    }

    /// The value key of a characteristic of a layout, by its path.
    func valueKey(of characteristic: ObjectPath, in gatt: GattLayout) -> ValueKey {
        for service in gatt.services {
            for (c, candidate) in service.characteristics.enumerated() where candidate.path == characteristic {
                return ValueKey(service: service.index, characteristic: c)
            }
        }
        return ValueKey(service: .min, characteristic: .min)
    }
}
