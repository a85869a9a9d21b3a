import BlueZ
import DBus

/// The options dict bluetoothd passes with every call into a GATT application
/// (`append_options`, bluez-dbus-api.md §5.4), in bluetoothd's key order:
/// `device` `o`, `offset` `q` (only when non-zero), `link` `s`, `prepare-authorize` `b`
/// (only when true), `mtu` `q`.
struct ServerRequestOptions: Sendable, Hashable {
    /// The remote central's device object path.
    var device: ObjectPath
    var offset: UInt16 = 0
    var mtu: UInt16
    var prepareAuthorize = false

    /// Options for a request from the central at `address` on the adapter at `adapter`.
    init(central address: String, adapter: ObjectPath, offset: UInt16 = 0, mtu: UInt16, prepareAuthorize: Bool = false)
        throws(RemoteCentralError)
    {
        do throws(DBusError) {
            device = try BlueZPath.device(address: address, adapter: adapter)
        } catch {
            throw RemoteCentralError(.invalidArgument, message: "not a Bluetooth address: \(address.prefix(40))")
        }
        self.offset = offset
        self.mtu = mtu
        self.prepareAuthorize = prepareAuthorize
    }

    /// The `a{sv}` argument.
    var dictionary: DBusValue {
        var entries = [DBusDictionaryEntry(.string("device"), .variant(.objectPath(device)))]
        if offset != 0 { entries.append(DBusDictionaryEntry(.string("offset"), .variant(.uint16(offset)))) }
        entries.append(DBusDictionaryEntry(.string("link"), .variant(.string("LE"))))
        if prepareAuthorize {
            entries.append(DBusDictionaryEntry(.string("prepare-authorize"), .variant(.boolean(true))))
        }
        entries.append(DBusDictionaryEntry(.string("mtu"), .variant(.uint16(mtu))))
        return .dictionary(key: .string, value: .variant, entries)
    }
}
