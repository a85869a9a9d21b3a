import DBus
import Dispatch

/// What a simulator and its successive daemons share: the state and the fixed configuration.
final class SimulatorCore: Sendable {
    let state: PosixMutex<SimState>
    let options: SimulatorOptions
    let profile: BlueZProfile
    /// Reads `AcquireNotify` sockets of registered applications; suspended while
    /// ``Simulator/holdNotifySockets(_:)`` holds them, so their buffers fill as on a congested link.
    let serverNotifyQueue = DispatchQueue(label: "swift-ble.simulator.server-notify")
    /// Whether ``serverNotifyQueue`` is suspended now (suspend and resume must balance).
    let notifySocketsHeld = PosixMutex(false)
    /// L2CAP channels and published PSMs, which outlive a daemon restart (they are the kernel's).
    let l2cap = SimulatedL2CAPRegistry()

    init(options: SimulatorOptions, profile: BlueZProfile) {
        self.options = options
        self.profile = profile
        self.state = PosixMutex(SimState())
    }
}
