/// Timing and shape of a simulated bluetoothd. Delays default to zero so tests run fast and
/// deterministically; set the real values to rehearse timing-sensitive code.
public struct SimulatorOptions: Sendable, Hashable {
    /// Adapters `hci0`… to create, with their addresses.
    public var adapters: [String] = ["00:1A:7D:DA:71:13"]
    /// Whether adapters start powered (`[Policy] AutoEnable`, default true).
    public var poweredOnStart = true
    /// From `Connect` to the link being up (`Connected=true` and the reply).
    public var connectDelay: Duration = .zero
    /// From link-up to `ServicesResolved=true` (MTU exchange and discovery).
    public var resolveDelay: Duration = .zero
    /// From `Disconnect` to the link going down (bluetoothd's `DISCONNECT_TIMER` is 2 s).
    public var disconnectDelay: Duration = .zero
    /// How long a connect to a peripheral that does not answer (not connectable, out of range)
    /// waits before failing with `le-connection-abort-by-local`.
    public var connectTimeout: Duration = .milliseconds(200)
    /// `[General] TemporaryTimeout`: seconds until an unseen temporary device goes.
    public var temporaryTimeout: Duration = .seconds(30)
    /// How often the simulated radio delivers due advertisements to discovering adapters.
    public var scanTick: Duration = .milliseconds(10)
    /// Advertisements a discovery sees before it has been running this long are dropped, as
    /// a real controller needs a moment to start scanning. Zero by default.
    public var scanStartLatency: Duration = .zero
    /// How long bluetoothd waits for a GATT application to answer a remote central's read or
    /// write (`ATTRIBUTE_TIMEOUT`, 5 s); the central then gets ATT error 0x0E. Also bounds the
    /// other calls the simulator makes into applications on a central's behalf.
    public var serverRequestTimeout: Duration = .seconds(5)
    /// From an indication leaving the peer to bluetoothd's confirmation reaching it, about a
    /// connection interval (30–50 ms with Linux's defaults). ATT allows one indication in flight
    /// per link, so the peer's next indication waits this long; zero (the default) confirms at once.
    public var indicationConfirmDelay: Duration = .zero
    /// How long SMP takes once the method's user step is done (key exchange and distribution).
    public var pairingDelay: Duration = .milliseconds(20)
    /// How long pairing waits for the agent's answer before it fails with
    /// `AuthenticationTimeout` and the agent is sent `Cancel` (the kernel's SMP timeout is 30 s,
    /// bluetoothd's agent timeout 60 s).
    public var pairingTimeout: Duration = .seconds(30)
    /// Whether the simulator also serves its control interface, `org.swiftble.Simulator1` under
    /// `org.swiftble.Simulator` (see ``SimulatorControlInterface``), on a connection of its own.
    public var controlInterface = true

    /// Whether the daemon runs as `bluetoothd --experimental`: it then offers the interfaces
    /// BlueZ marks experimental, here `AdvertisementMonitorManager1` (passive scanning).
    public var experimental = false

    /// The defaults.
    public init() {}
}
