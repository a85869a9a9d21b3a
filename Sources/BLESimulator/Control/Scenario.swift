import Foundation

/// A simulator set-up read from JSON: which bluetoothd to imitate, its adapters and timing,
/// and the peripherals in range. The schema is documented in `Scenarios/README.md`.
public struct Scenario: Sendable, Hashable, Codable {
    /// `"5.66"` (default) or `"5.87"`.
    public var profile: String?
    /// Adapter addresses, `hci0` first (default: one adapter).
    public var adapters: [String]?
    /// Timing, in milliseconds.
    public var timing: Timing?
    /// The peripherals in range.
    public var peripherals: [VirtualPeripheral]

    /// Delays of the simulated daemon, in milliseconds (all default to zero but
    /// `connectTimeoutMs` 200 and `temporaryTimeoutMs` 30,000).
    public struct Timing: Sendable, Hashable, Codable {
        /// ``SimulatorOptions/connectDelay``
        public var connectDelayMs: Int?
        /// ``SimulatorOptions/resolveDelay``
        public var resolveDelayMs: Int?
        /// ``SimulatorOptions/disconnectDelay``
        public var disconnectDelayMs: Int?
        /// ``SimulatorOptions/connectTimeout``
        public var connectTimeoutMs: Int?
        /// ``SimulatorOptions/temporaryTimeout``
        public var temporaryTimeoutMs: Int?
        /// ``SimulatorOptions/scanTick``
        public var scanTickMs: Int?
    }

    /// Creates a scenario.
    public init(profile: String? = nil, peripherals: [VirtualPeripheral]) {
        self.profile = profile
        self.peripherals = peripherals
    }

    /// Reads a scenario file.
    public static func load(from url: URL) throws -> Scenario {
        try JSONDecoder().decode(Scenario.self, from: Data(contentsOf: url))
    }

    /// The profile named by ``profile``; throws for an unknown name.
    public func blueZProfile() throws -> BlueZProfile {
        guard let name = profile else { return .v5_66 }
        guard let profile = BlueZProfile.named(name) else { throw ScenarioError.unknownProfile(name) }
        return profile
    }

    /// The simulator options this scenario asks for.
    public var simulatorOptions: SimulatorOptions {
        var options = SimulatorOptions()
        if let adapters, !adapters.isEmpty { options.adapters = adapters }
        if let timing {
            if let ms = timing.connectDelayMs { options.connectDelay = .milliseconds(ms) }
            if let ms = timing.resolveDelayMs { options.resolveDelay = .milliseconds(ms) }
            if let ms = timing.disconnectDelayMs { options.disconnectDelay = .milliseconds(ms) }
            if let ms = timing.connectTimeoutMs { options.connectTimeout = .milliseconds(ms) }
            if let ms = timing.temporaryTimeoutMs { options.temporaryTimeout = .milliseconds(ms) }
            if let ms = timing.scanTickMs { options.scanTick = .milliseconds(max(1, ms)) }
        }
        return options
    }
}

/// Why a scenario cannot be used.
public enum ScenarioError: Error, Sendable, CustomStringConvertible {
    /// The profile is neither 5.66 nor 5.87.
    case unknownProfile(String)

    /// What is wrong, in one line.
    public var description: String {
        switch self {
        case .unknownProfile(let name): "unknown BlueZ profile \"\(name)\" (use 5.66 or 5.87)"
        }
    }
}
