import BlueZ
import DBus
import Foundation

extension Daemon {
    /// bluetoothd's deviceinfo plugin (`profiles/deviceinfo/deviceinfo.c`) at every resolution:
    /// it reads PnP ID `2A50` of each Device Information service and sets the device's
    /// `Modalias` (`btd_device_set_pnpid`, `bt_modalias`), announced after the gap plugin's
    /// changes because its read goes out after theirs. Returns the change, if any.
    func readDeviceInformation(_ state: SimState, _ path: ObjectPath) -> [(String, DBusValue)] {
        guard let device = state.devices[path], let gatt = device.gatt, let record = state.peripherals[device.address]
        else { return [] }
        let information = BlueZUUID.canonical("180A")
        let pnpID = BlueZUUID.canonical("2A50")
        var modalias = stringProperty("Modalias", path)
        var changed = false
        for service in gatt.services where service.uuid == information && service.primary {
            for (c, characteristic) in service.characteristics.enumerated() where characteristic.uuid == pnpID {
                guard characteristic.definition.servesRead(on: device.bondSecurity),
                    let value = record.values[ValueKey(service: service.index, characteristic: c)],
                    let alias = Self.modalias(pnpID: value), alias != modalias
                else { continue }
                modalias = alias
                changed = true
            }
        }
        guard changed, let modalias else { return [] }
        return [("Modalias", .string(modalias))]
    }

    /// `bt_modalias` of a PnP ID value (source, vendor, product, version; little-endian): nil
    /// when it is shorter than 7 bytes or its vendor ID source is neither Bluetooth SIG (1)
    /// nor USB (2).
    static func modalias(pnpID value: Data) -> String? {
        guard value.count >= 7 else { return nil }
        let bytes = [UInt8](value.prefix(7))
        let prefix: String
        switch bytes[0] {
        case 1: prefix = "bluetooth"
        case 2: prefix = "usb"
        default: return nil
        }
        func field(_ at: Int) -> String {
            let number = UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
            let digits = String(number, radix: 16, uppercase: true)
            return String(repeating: "0", count: 4 - digits.count) + digits
        }
        return "\(prefix):v\(field(1))p\(field(3))d\(field(5))"
    }
}
