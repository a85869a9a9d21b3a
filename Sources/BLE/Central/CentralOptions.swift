import BlueZ
import Foundation

/// Defaults of a ``Central``: deadlines per phase, buffering, logging.
public struct CentralOptions: Sendable {
    /// Deadline of a plain call to bluetoothd (25 s, libdbus's default).
    public var callTimeout: Duration = .seconds(25)
    /// Deadline of ``Central/connect(_:timeout:)`` when none is given: link, discovery and
    /// resolution together (30 s; bluetoothd's own ATT timeout is 30 s).
    public var connectTimeout: Duration = .seconds(30)
    /// Discoveries a scan holds for a slow consumer before dropping (and counting) new ones.
    public var scanBufferSize: Int = 1024
    /// Notifications one iteration of ``Characteristic/notifications`` holds for a slow reader
    /// before dropping (and counting) new ones: 8,192, several seconds at the fastest rate the
    /// bus sustains.
    public var notificationBufferSize: Int = 8192
    /// Which values a full notification buffer drops: the new ones (the default) or the oldest
    /// buffered ones. Each iteration counts its losses (``NotificationSequence/AsyncIterator/droppedCount``).
    public var notificationBufferPolicy: NotificationBufferPolicy = .dropNewest
    /// Deadline of ``Peripheral/pair(timeout:)`` when none is given: connecting and pairing,
    /// including the user's typing (60 s, bluetoothd's wait for an agent's answer).
    public var pairTimeout: Duration = .seconds(60)
    /// Answers BlueZ's pairing questions; the default is Just Works (``JustWorksPairing``).
    public var pairingHandler: any PairingHandler = JustWorksPairing()
    /// How long the ``pairingHandler`` may take to answer one question before BlueZ is told it
    /// was cancelled (25 s: within the kernel's 30 s SMP timeout, so pairing fails cleanly).
    public var pairingAnswerTimeout: Duration = .seconds(25)
    /// Writes without response one peripheral may have in flight to bluetoothd at once (16).
    /// bluetoothd answers each as soon as it has queued the packet, so consecutive ones are sent
    /// together, in order, without a round trip each; other operations still go one at a time.
    public var writeWithoutResponseWindow: Int = 16
    /// The policy of peripherals this central connects.
    public var reconnectPolicy: ReconnectPolicy = .never
    /// Where the SDK logs; nothing by default.
    public var logger: BLELogger = .disabled
    /// Where ``Peripheral/openL2CAPChannel(psm:options:timeout:)`` gets its sockets: the
    /// kernel's (`KernelL2CAPTransport`) by default; a simulator's in tests.
    public var l2capTransport: any L2CAPTransport = KernelL2CAPTransport()

    /// Keeps what this central does (connected peripherals with their reconnect policies, live
    /// subscriptions, a running scan's filter) under this name across process restarts, as Core
    /// Bluetooth's `CBCentralManagerOptionRestoreIdentifierKey`; a central created later with
    /// the same name takes it over (``Central/restoredState``). One central per name at a time:
    /// another one gets ``BLEError/Code/inProgress``. Letters, digits, `.`, `_` and `-`. `nil`
    /// (the default): nothing is kept.
    public var restoreIdentifier: String?
    /// Where the state of ``restoreIdentifier`` is kept; `nil` (the default):
    /// `$XDG_STATE_HOME/swift-ble`, else `~/.local/state/swift-ble`.
    public var restorationDirectory: URL?

    /// The defaults.
    public init() {}
}
