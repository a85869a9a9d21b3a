import DBus

/// Method names of the BlueZ interfaces and of the standard interfaces BlueZ uses.
///
/// One flat namespace: a name shared by several interfaces (`ReadValue` on characteristics and
/// descriptors, `Release` on agents, profiles and advertisements) appears once. The
/// signatures are in bluez-dbus-api.md; bluetoothd matches them exactly (§9 Q26).
public enum BlueZMethod {
    // MARK: org.freedesktop.DBus.ObjectManager and Properties

    /// `GetManagedObjects()` → `a{oa{sa{sv}}}` on `org.freedesktop.DBus.ObjectManager`.
    public static let getManagedObjects: MemberName = NameLiteral.member("GetManagedObjects")
    /// `Get(s interface, s name)` → `v` on `org.freedesktop.DBus.Properties`.
    public static let get: MemberName = NameLiteral.member("Get")
    /// `GetAll(s interface)` → `a{sv}` on `org.freedesktop.DBus.Properties`.
    public static let getAll: MemberName = NameLiteral.member("GetAll")
    /// `Set(s interface, s name, v value)` on `org.freedesktop.DBus.Properties`.
    public static let set: MemberName = NameLiteral.member("Set")

    // MARK: org.bluez.Adapter1

    /// `StartDiscovery()` on `Adapter1`.
    public static let startDiscovery: MemberName = NameLiteral.member("StartDiscovery")
    /// `StopDiscovery()` on `Adapter1`.
    public static let stopDiscovery: MemberName = NameLiteral.member("StopDiscovery")
    /// `SetDiscoveryFilter(a{sv} filter)` on `Adapter1`.
    public static let setDiscoveryFilter: MemberName = NameLiteral.member("SetDiscoveryFilter")
    /// `GetDiscoveryFilters()` → `as` on `Adapter1`.
    public static let getDiscoveryFilters: MemberName = NameLiteral.member("GetDiscoveryFilters")
    /// `RemoveDevice(o device)` on `Adapter1`.
    public static let removeDevice: MemberName = NameLiteral.member("RemoveDevice")
    /// `ConnectDevice(a{sv} properties)` → `o` on `Adapter1` (experimental).
    public static let connectDevice: MemberName = NameLiteral.member("ConnectDevice")

    // MARK: org.bluez.Device1

    /// `Connect()` on `Device1`.
    public static let connect: MemberName = NameLiteral.member("Connect")
    /// `Disconnect()` on `Device1`.
    public static let disconnect: MemberName = NameLiteral.member("Disconnect")
    /// `ConnectProfile(s uuid)` on `Device1`.
    public static let connectProfile: MemberName = NameLiteral.member("ConnectProfile")
    /// `DisconnectProfile(s uuid)` on `Device1`.
    public static let disconnectProfile: MemberName = NameLiteral.member("DisconnectProfile")
    /// `Pair()` on `Device1`.
    public static let pair: MemberName = NameLiteral.member("Pair")
    /// `CancelPairing()` on `Device1`.
    public static let cancelPairing: MemberName = NameLiteral.member("CancelPairing")
    /// `GetServiceRecords()` → `aay` on `Device1` (≥5.79, experimental).
    public static let getServiceRecords: MemberName = NameLiteral.member("GetServiceRecords")

    // MARK: org.bluez.GattCharacteristic1 / GattDescriptor1

    /// `ReadValue(a{sv} options)` → `ay` on `GattCharacteristic1` and `GattDescriptor1`.
    public static let readValue: MemberName = NameLiteral.member("ReadValue")
    /// `WriteValue(ay value, a{sv} options)` on `GattCharacteristic1` and `GattDescriptor1`.
    public static let writeValue: MemberName = NameLiteral.member("WriteValue")
    /// `AcquireWrite(a{sv} options)` → `(h fd, q mtu)` on `GattCharacteristic1`.
    public static let acquireWrite: MemberName = NameLiteral.member("AcquireWrite")
    /// `AcquireNotify(a{sv} options)` → `(h fd, q mtu)` on `GattCharacteristic1`.
    public static let acquireNotify: MemberName = NameLiteral.member("AcquireNotify")
    /// `StartNotify()` on `GattCharacteristic1`.
    public static let startNotify: MemberName = NameLiteral.member("StartNotify")
    /// `StopNotify()` on `GattCharacteristic1`.
    public static let stopNotify: MemberName = NameLiteral.member("StopNotify")
    /// `Confirm()` on an exported `GattCharacteristic1`: a peer confirmed an indication.
    public static let confirm: MemberName = NameLiteral.member("Confirm")

    // MARK: Managers

    /// `RegisterApplication(o app, a{sv} options)` on `GattManager1`.
    public static let registerApplication: MemberName = NameLiteral.member("RegisterApplication")
    /// `UnregisterApplication(o app)` on `GattManager1`.
    public static let unregisterApplication: MemberName = NameLiteral.member("UnregisterApplication")
    /// `RegisterAdvertisement(o advertisement, a{sv} options)` on `LEAdvertisingManager1`.
    public static let registerAdvertisement: MemberName = NameLiteral.member("RegisterAdvertisement")
    /// `RegisterMonitor(o root)` on `AdvertisementMonitorManager1`.
    public static let registerMonitor: MemberName = NameLiteral.member("RegisterMonitor")
    /// `UnregisterMonitor(o root)` on `AdvertisementMonitorManager1`.
    public static let unregisterMonitor: MemberName = NameLiteral.member("UnregisterMonitor")
    /// `Activate()` on `AdvertisementMonitor1`: bluetoothd took the monitor up.
    public static let activate: MemberName = NameLiteral.member("Activate")
    /// `DeviceFound(o device)` on `AdvertisementMonitor1`.
    public static let deviceFound: MemberName = NameLiteral.member("DeviceFound")
    /// `DeviceLost(o device)` on `AdvertisementMonitor1`.
    public static let deviceLost: MemberName = NameLiteral.member("DeviceLost")
    /// `UnregisterAdvertisement(o advertisement)` on `LEAdvertisingManager1`.
    public static let unregisterAdvertisement: MemberName = NameLiteral.member("UnregisterAdvertisement")
    /// `RegisterAgent(o agent, s capability)` on `AgentManager1`.
    public static let registerAgent: MemberName = NameLiteral.member("RegisterAgent")
    /// `UnregisterAgent(o agent)` on `AgentManager1`.
    public static let unregisterAgent: MemberName = NameLiteral.member("UnregisterAgent")
    /// `RequestDefaultAgent(o agent)` on `AgentManager1`.
    public static let requestDefaultAgent: MemberName = NameLiteral.member("RequestDefaultAgent")

    // MARK: Called by bluetoothd on application objects

    /// `Release()` on `Agent1`, `GattProfile1` and `LEAdvertisement1`.
    public static let release: MemberName = NameLiteral.member("Release")
    /// `RequestPinCode(o device)` → `s` on `Agent1`.
    public static let requestPinCode: MemberName = NameLiteral.member("RequestPinCode")
    /// `DisplayPinCode(o device, s pincode)` on `Agent1`.
    public static let displayPinCode: MemberName = NameLiteral.member("DisplayPinCode")
    /// `RequestPasskey(o device)` → `u` on `Agent1`.
    public static let requestPasskey: MemberName = NameLiteral.member("RequestPasskey")
    /// `DisplayPasskey(o device, u passkey, q entered)` on `Agent1`.
    public static let displayPasskey: MemberName = NameLiteral.member("DisplayPasskey")
    /// `RequestConfirmation(o device, u passkey)` on `Agent1`.
    public static let requestConfirmation: MemberName = NameLiteral.member("RequestConfirmation")
    /// `RequestAuthorization(o device)` on `Agent1`.
    public static let requestAuthorization: MemberName = NameLiteral.member("RequestAuthorization")
    /// `AuthorizeService(o device, s uuid)` on `Agent1`.
    public static let authorizeService: MemberName = NameLiteral.member("AuthorizeService")
    /// `Cancel()` on `Agent1`.
    public static let cancel: MemberName = NameLiteral.member("Cancel")
}
