import BlueZ
import DBus
import Foundation

extension Daemon {
    /// bluetoothd's gap plugin (`profiles/gap/gas.c`) on a resolved device with a Generic
    /// Access service: it reads Device Name `2A00` and, when the device has no appearance yet,
    /// Appearance `2A01`, and updates the device (`btd_device_device_set_name`,
    /// `device_set_appearance`). Returns the `Device1` changes in bluetoothd's order, which the
    /// real daemon's main loop flushes with `ServicesResolved` (Tests/RealBlueZTests/Traces):
    /// `Name`, `Alias` (unless a client set one), `Appearance`, `Icon`. 5.66 reads at every
    /// connection (`gap_disconnect` forgets the service); from 5.77 once per device object.
    func readGenericAccess(_ state: inout SimState, _ path: ObjectPath) -> [(String, DBusValue)] {
        guard var device = state.devices[path], let gatt = device.gatt, let record = state.peripherals[device.address],
            !(profile.readsGenericAccessOnce && device.genericAccessRead)
        else { return [] }
        let gap = BlueZUUID.canonical("1800")
        // `foreach_gap_service` keeps the first; a second one is only logged.
        guard let service = gatt.services.first(where: { $0.uuid == gap && $0.primary }) else { return [] }
        device.genericAccessRead = true
        state.devices[path] = device
        let name = BlueZUUID.canonical("2A00")
        let appearance = BlueZUUID.canonical("2A01")
        var changes: [(String, DBusValue)] = []
        for (c, characteristic) in service.characteristics.enumerated() {
            // The read fails where the peer refuses it; the plugin then only logs.
            guard characteristic.definition.servesRead(on: device.bondSecurity) else { continue }
            let value = record.values[ValueKey(service: service.index, characteristic: c)] ?? Data()
            if characteristic.uuid == name {
                changes += renamed(path, device.address, to: value)
            } else if characteristic.uuid == appearance {
                changes += appearanceChanged(path, to: value)
            }
        }
        return changes
    }

    /// `read_device_name_cb`: an empty value is ignored, the same name changes nothing.
    private func renamed(_ path: ObjectPath, _ address: BluetoothAddress, to value: Data) -> [(String, DBusValue)] {
        guard !value.isEmpty else { return [] }
        let name = Self.deviceName(value)
        let current = stringProperty("Name", path) ?? ""
        guard name != current else { return [] }
        var changes: [(String, DBusValue)] = [("Name", .string(name))]
        // Without a client's alias, `Alias` shows the name (the address before there was one).
        if stringProperty("Alias", path) == (current.isEmpty ? address.aliasFallback : current) {
            changes.append(("Alias", .string(name)))
        }
        return changes
    }

    /// `handle_appearance` reads only for a device without one; a malformed value is ignored.
    private func appearanceChanged(_ path: ObjectPath, to value: Data) -> [(String, DBusValue)] {
        let current = connection.property("Appearance", interface: BlueZInterface.device1, path: path)
        guard current == nil || current == .uint16(0), value.count == 2 else { return [] }
        let appearance = UInt16(value[value.startIndex]) | UInt16(value[value.startIndex + 1]) << 8
        guard appearance != 0 else { return [] }
        var changes: [(String, DBusValue)] = [("Appearance", .uint16(appearance))]
        if let icon = Self.icon(forAppearance: appearance) { changes.append(("Icon", .string(icon))) }
        return changes
    }

    /// A string property of `Device1` at `path`, if present.
    func stringProperty(_ name: String, _ path: ObjectPath) -> String? {
        guard case .string(let value)? = connection.property(name, interface: BlueZInterface.device1, path: path)
        else { return nil }
        return value
    }

    /// `name2utf8`: valid UTF-8 as it is; otherwise up to the first NUL, every non-ASCII byte
    /// a space, surrounding white space removed (GLib counts a NUL as invalid UTF-8).
    static func deviceName(_ value: Data) -> String {
        if !value.contains(0), let name = String(validating: value, as: UTF8.self) { return name }
        let ascii = value.prefix(249).prefix { $0 != 0 }.map { $0 < 0x80 ? $0 : 0x20 }
        return String(decoding: ascii, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `gap_appearance_to_icon`: the icon name for an appearance's category, if it has one.
    static func icon(forAppearance appearance: UInt16) -> String? {
        switch appearance >> 6 {
        case 0x00: "unknown"
        case 0x01: "phone"
        case 0x02: "computer"
        case 0x05: "video-display"
        case 0x0a: "multimedia-player"
        case 0x0b: "scanner"
        case 0x0f:
            switch appearance & 0x3f {
            case 0x01: "input-keyboard"
            case 0x02: "input-mouse"
            case 0x03, 0x04: "input-gaming"
            case 0x05: "input-tablet"
            case 0x08: "scanner"
            default: nil
            }
        default: nil
        }
    }
}
