import BlueZ
import DBus

extension Daemon {
    /// GattManager1 and LEAdvertisingManager1 of an adapter (the peripheral role).
    func serverInterfaces(adapter index: Int) throws(DBusError) -> [ExportedInterface] {
        []
    }
}
