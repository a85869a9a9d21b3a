import DBus

/// Signal names bluetoothd emits.
public enum BlueZSignal {
    /// `InterfacesAdded(o object, a{sa{sv}} interfaces)` on `org.freedesktop.DBus.ObjectManager`,
    /// emitted from `/`.
    public static let interfacesAdded: MemberName = NameLiteral.member("InterfacesAdded")
    /// `InterfacesRemoved(o object, as interfaces)` on `org.freedesktop.DBus.ObjectManager`,
    /// emitted from `/`.
    public static let interfacesRemoved: MemberName = NameLiteral.member("InterfacesRemoved")
    /// `PropertiesChanged(s interface, a{sv} changed, as invalidated)` on
    /// `org.freedesktop.DBus.Properties`, emitted from the object whose properties changed.
    public static let propertiesChanged: MemberName = NameLiteral.member("PropertiesChanged")
    /// `Disconnected(s name, s message)` on `org.bluez.Device1` (BlueZ ≥5.83); see
    /// ``DisconnectReason``.
    public static let disconnected: MemberName = NameLiteral.member("Disconnected")
}
