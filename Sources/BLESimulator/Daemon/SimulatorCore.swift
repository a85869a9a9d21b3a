import Synchronization

/// What a simulator and its successive daemons share: the state and the fixed configuration.
final class SimulatorCore: Sendable {
    let state: Mutex<SimState>
    let options: SimulatorOptions
    let profile: BlueZProfile

    init(options: SimulatorOptions, profile: BlueZProfile) {
        self.options = options
        self.profile = profile
        self.state = Mutex(SimState())
    }
}
