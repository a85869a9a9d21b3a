/// Why a link went down.
public enum DisconnectReason: Sendable, Hashable, CustomStringConvertible {
    /// This process called ``Peripheral/disconnect()``.
    case local
    /// The peripheral ended the link.
    case remote
    /// Supervision timeout: the peripheral went out of range or stopped answering.
    case timeout
    /// Authentication failed.
    case authentication
    /// The host suspended.
    case suspend
    /// The adapter powered off.
    case adapterPoweredOff
    /// bluetoothd went away.
    case bluetoothUnavailable
    /// BlueZ removed the device.
    case deviceRemoved
    /// Not known: BlueZ before 5.83 does not say why a link dropped.
    case unknown

    /// A short, human-readable form.
    public var description: String {
        switch self {
        case .local: "local"
        case .remote: "remote"
        case .timeout: "timeout"
        case .authentication: "authentication"
        case .suspend: "suspend"
        case .adapterPoweredOff: "adapterPoweredOff"
        case .bluetoothUnavailable: "bluetoothUnavailable"
        case .deviceRemoved: "deviceRemoved"
        case .unknown: "unknown"
        }
    }
}

/// Something that happened to a peripheral's connection.
public enum ConnectionEvent: Sendable, Hashable {
    /// Connected, services resolved, GATT objects available.
    case connected
    /// The link went down.
    case disconnected(DisconnectReason)
    /// A reconnect attempt (1-based) starts after the given delay.
    case reconnecting(attempt: Int, after: Duration)
    /// Reconnecting stopped: the error was not transient, or attempts ran out.
    case reconnectFailed(BLEError.Code)
    /// BlueZ added or removed GATT objects of the connected device: handles obtained earlier
    /// may be stale (Core Bluetooth's `didModifyServices`).
    case servicesChanged
    /// BlueZ's `Device1.Paired` changed: a bond was made (by ``Peripheral/pair(timeout:)``,
    /// or by a pairing the peripheral asked for, answered through the ``PairingHandler``) or
    /// removed (``Central/forget(_:)``). Sent while the peripheral is followed (from its first
    /// connection on).
    case pairingChanged(isPaired: Bool)
    /// The link's ATT MTU is not the one announced before (the first link's differs from the
    /// minimum, 23, or a later link negotiated another): ``Peripheral/mtu`` and
    /// ``Peripheral/maximumWriteLength(for:)`` follow it. BlueZ reports no change of its own
    /// (it drops and restores `MTU` silently, quirk Q10): the SDK reads it once per link.
    case mtuChanged(Int)
}

/// Where a peripheral's connection stands.
public enum ConnectionState: Sendable, Hashable {
    /// No link.
    case disconnected
    /// Connecting (or reconnecting).
    case connecting
    /// Connected and resolved.
    case connected
    /// Disconnecting at this process's request.
    case disconnecting
}
