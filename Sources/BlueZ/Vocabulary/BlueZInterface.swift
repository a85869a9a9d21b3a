import DBus

/// The names of the `org.bluez` interfaces this module models (bluez-dbus-api.md §1.3).
///
/// The standard interfaces bluetoothd also lists on every object
/// (`org.freedesktop.DBus.Introspectable`, `org.freedesktop.DBus.Properties`) are the `DBus`
/// module's ``DBus/InterfaceName/introspectable`` and ``DBus/InterfaceName/properties``.
public enum BlueZInterface {
    /// `org.bluez.Adapter1`, on `/org/bluez/hciN`.
    public static let adapter1: InterfaceName = NameLiteral.interface("org.bluez.Adapter1")
    /// `org.bluez.Device1`, on `<adapter>/dev_AA_BB_CC_DD_EE_FF`.
    public static let device1: InterfaceName = NameLiteral.interface("org.bluez.Device1")
    /// `org.bluez.GattService1`, on remote services and on services an application exports.
    public static let gattService1: InterfaceName = NameLiteral.interface("org.bluez.GattService1")
    /// `org.bluez.GattCharacteristic1`, on remote and exported characteristics.
    public static let gattCharacteristic1: InterfaceName = NameLiteral.interface("org.bluez.GattCharacteristic1")
    /// `org.bluez.GattDescriptor1`, on remote and exported descriptors.
    public static let gattDescriptor1: InterfaceName = NameLiteral.interface("org.bluez.GattDescriptor1")
    /// `org.bluez.GattManager1`, on the adapter: registers GATT applications.
    public static let gattManager1: InterfaceName = NameLiteral.interface("org.bluez.GattManager1")
    /// `org.bluez.GattProfile1`, exported by an application that wants auto-connection.
    public static let gattProfile1: InterfaceName = NameLiteral.interface("org.bluez.GattProfile1")
    /// `org.bluez.LEAdvertisingManager1`, on the adapter: registers advertisements.
    public static let leAdvertisingManager1: InterfaceName = NameLiteral.interface(
        "org.bluez.LEAdvertisingManager1")
    /// `org.bluez.LEAdvertisement1`, exported by an application that advertises.
    public static let leAdvertisement1: InterfaceName = NameLiteral.interface("org.bluez.LEAdvertisement1")
    /// `org.bluez.AdvertisementMonitorManager1`, on the adapter: registers advertisement
    /// monitors (passive scanning). Experimental: only `bluetoothd --experimental` offers it.
    public static let advertisementMonitorManager1: InterfaceName = NameLiteral.interface(
        "org.bluez.AdvertisementMonitorManager1")
    /// `org.bluez.AdvertisementMonitor1`, exported by an application that monitors advertisements.
    public static let advertisementMonitor1: InterfaceName = NameLiteral.interface(
        "org.bluez.AdvertisementMonitor1")
    /// `org.bluez.AgentManager1`, on `/org/bluez`: registers pairing agents.
    public static let agentManager1: InterfaceName = NameLiteral.interface("org.bluez.AgentManager1")
    /// `org.bluez.Agent1`, exported by a pairing agent and called by bluetoothd.
    public static let agent1: InterfaceName = NameLiteral.interface("org.bluez.Agent1")
    /// `org.bluez.Battery1`, on a device whose Battery Service the battery plugin claimed.
    public static let battery1: InterfaceName = NameLiteral.interface("org.bluez.Battery1")
}
