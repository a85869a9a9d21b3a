import DBus

/// Which D-Bus bus bluetoothd is on.
public enum Bus: Sendable, Hashable, CustomStringConvertible {
    /// The system bus (or the one `DBUS_SYSTEM_BUS_ADDRESS` names): where bluetoothd lives.
    case system
    /// The session bus.
    case session
    /// A bus at an address, e.g. a `BLESimulator` on a private bus.
    case address(String)

    /// The same bus as the D-Bus layer names it, for a tool that also talks to it directly.
    public var connectionBus: Connection.Bus {
        switch self {
        case .system: .system
        case .session: .session
        case .address(let address): .address(address)
        }
    }

    /// A short, human-readable form.
    public var description: String { connectionBus.description }
}
