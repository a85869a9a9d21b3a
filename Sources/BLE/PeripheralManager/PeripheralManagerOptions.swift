import BlueZ

/// Defaults of a ``PeripheralManager``: deadlines, buffering, notify channels, logging.
public struct PeripheralManagerOptions: Sendable {
    /// Deadline of each call to bluetoothd (register, unregister, advertise): 25 s, libdbus's default.
    public var callTimeout: Duration = .seconds(25)
    /// How long a request waits for the app's answer before the manager answers it with
    /// ``ATTError/unlikely``: 4.5 s, just under bluetoothd's own 5 s deadline
    /// (`ATTRIBUTE_TIMEOUT`), so the central gets a defined error and a late answer is ignored.
    public var requestTimeout: Duration = .milliseconds(4500)
    /// Requests ``PeripheralManager/requests`` holds for a slow app; a request that does not
    /// fit is answered at once with ``ATTError/insufficientResources`` (which bluetoothd sends
    /// as Unlikely Error): 256.
    public var requestBufferSize: Int = 256
    /// Whether notifying characteristics offer bluetoothd a notify channel (`AcquireNotify`):
    /// a socket that gives back-pressure and names the subscribing central. When false, values
    /// go out as `PropertiesChanged(Value)` signals, which have no back-pressure.
    public var acquireNotify = true
    /// Where the SDK logs; nothing by default.
    public var logger: BLELogger = .disabled
    /// Where ``PeripheralManager/publishL2CAPChannel(encrypted:psm:options:)`` gets its
    /// sockets: the kernel's (`KernelL2CAPTransport`) by default; a simulator's in tests.
    public var l2capTransport: any L2CAPTransport = KernelL2CAPTransport()

    /// The defaults.
    public init() {}
}
