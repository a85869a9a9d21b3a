import DBus

/// Where bluetoothd lives on the bus: its well-known name and its fixed object paths.
public enum BlueZService {
    /// `org.bluez`, the well-known name bluetoothd owns on the system bus.
    public static let busName: BusName = NameLiteral.busName("org.bluez")

    /// `/`, the path of bluetoothd's `org.freedesktop.DBus.ObjectManager`: `GetManagedObjects`
    /// is called there and `InterfacesAdded`/`InterfacesRemoved` are emitted from there.
    public static let rootPath: ObjectPath = .root

    /// `/org/bluez`, the object carrying `AgentManager1` and `ProfileManager1`; adapters are its
    /// children (`/org/bluez/hci0`).
    public static let managerPath: ObjectPath = NameLiteral.path("/org/bluez")
}
