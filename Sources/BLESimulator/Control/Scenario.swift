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
    /// Run as `bluetoothd --experimental` (``SimulatorOptions/experimental``): passive
    /// scanning through advertisement monitors is offered.
    public var experimental: Bool?
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
        /// ``SimulatorOptions/indicationConfirmDelay``
        public var indicationConfirmMs: Int?
        /// ``SimulatorOptions/pairingDelay``
        public var pairingDelayMs: Int?

        private enum CodingKeys: String, CodingKey {
            case connectDelayMs, resolveDelayMs, disconnectDelayMs, connectTimeoutMs, temporaryTimeoutMs, scanTickMs
            case indicationConfirmMs, pairingDelayMs
        }

        /// Decodes the timing; an unknown key is an error.
        public init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(CodingKeys.self)
            let c = try decoder.container(keyedBy: CodingKeys.self)
            connectDelayMs = try c.decodeIfPresent(Int.self, forKey: .connectDelayMs)
            resolveDelayMs = try c.decodeIfPresent(Int.self, forKey: .resolveDelayMs)
            disconnectDelayMs = try c.decodeIfPresent(Int.self, forKey: .disconnectDelayMs)
            connectTimeoutMs = try c.decodeIfPresent(Int.self, forKey: .connectTimeoutMs)
            temporaryTimeoutMs = try c.decodeIfPresent(Int.self, forKey: .temporaryTimeoutMs)
            scanTickMs = try c.decodeIfPresent(Int.self, forKey: .scanTickMs)
            indicationConfirmMs = try c.decodeIfPresent(Int.self, forKey: .indicationConfirmMs)
            pairingDelayMs = try c.decodeIfPresent(Int.self, forKey: .pairingDelayMs)
        }
    }

    /// Creates a scenario.
    public init(profile: String? = nil, peripherals: [VirtualPeripheral]) {
        self.profile = profile
        self.peripherals = peripherals
    }

    private enum CodingKeys: String, CodingKey { case profile, adapters, timing, experimental, peripherals }

    /// Decodes a scenario; an unknown key, at any depth, is an error naming it and its path.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        profile = try c.decodeIfPresent(String.self, forKey: .profile)
        adapters = try c.decodeIfPresent([String].self, forKey: .adapters)
        timing = try c.decodeIfPresent(Timing.self, forKey: .timing)
        experimental = try c.decodeIfPresent(Bool.self, forKey: .experimental)
        peripherals = try c.decode([VirtualPeripheral].self, forKey: .peripherals)
    }

    /// Reads a scenario file.
    ///
    /// - Throws: ``FileReadError`` when the file cannot be read, ``ScenarioError`` when it is
    ///   not a scenario; both say why in words.
    public static func load(from url: URL) throws -> Scenario {
        let data = try FileContents.read(url.path)
        if data.isEmpty { throw ScenarioError.invalid("the file is empty") }
        do {
            return try JSONDecoder().decode(Scenario.self, from: data)
        } catch let error as DecodingError {
            throw ScenarioError.invalid(error.plainDescription)
        }
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
        options.experimental = experimental ?? false
        if let timing {
            if let ms = timing.connectDelayMs { options.connectDelay = .milliseconds(ms) }
            if let ms = timing.resolveDelayMs { options.resolveDelay = .milliseconds(ms) }
            if let ms = timing.disconnectDelayMs { options.disconnectDelay = .milliseconds(ms) }
            if let ms = timing.connectTimeoutMs { options.connectTimeout = .milliseconds(ms) }
            if let ms = timing.temporaryTimeoutMs { options.temporaryTimeout = .milliseconds(ms) }
            if let ms = timing.scanTickMs { options.scanTick = .milliseconds(max(1, ms)) }
            if let ms = timing.indicationConfirmMs { options.indicationConfirmDelay = .milliseconds(max(0, ms)) }
            if let ms = timing.pairingDelayMs { options.pairingDelay = .milliseconds(max(0, ms)) }
        }
        return options
    }
}

/// Why a scenario cannot be used.
public enum ScenarioError: Error, Sendable, CustomStringConvertible {
    /// The profile is neither 5.66 nor 5.87.
    case unknownProfile(String)
    /// An object has a key the schema does not know (a typo, most likely); `path` is where.
    case unknownKey(String, path: String)
    /// The file is not a scenario: not JSON, or a value of the wrong kind (said in words).
    case invalid(String)

    /// What is wrong, in one line.
    public var description: String {
        switch self {
        case .unknownProfile(let name): "unknown BlueZ profile \"\(name)\" (use 5.66 or 5.87)"
        case .unknownKey(let key, let path): "unknown key \"\(key)\" in \(path) (see Scenarios/README.md)"
        case .invalid(let reason): reason
        }
    }
}
