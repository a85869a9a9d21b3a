import Foundation

/// What a central with a restore identifier keeps across process restarts, as written to its
/// state file: the peripherals it connected (with their reconnect policies and live
/// subscriptions) and the filter of a running scan.
///
/// A value with pure transitions: each returns whether the record changed, so the shell
/// (``RestorationRecorder``) writes the file only then. No I/O, no clock.
struct RestorationRecord: Codable, Equatable, Sendable {
    /// Names the file's format, so that a file of something else is told apart from a damaged one.
    static let formatName = "swift-ble.restoration"
    static let currentVersion = 1

    /// A characteristic with a live notification iteration, named so that it is found again
    /// after a restart: by its service's and its own UUID, the declaration handle breaking ties
    /// between characteristics of the same UUIDs.
    struct Subscription: Codable, Hashable, Sendable {
        var service: String
        var characteristic: String
        var handle: UInt16?
    }

    /// A peripheral connected through this central and not disconnected by the app.
    struct Peripheral: Codable, Equatable, Sendable {
        /// Stored as ``PeripheralID`` encodes itself (the first version's files held its text,
        /// which decodes too).
        var id: PeripheralID
        var policy: Policy
        var subscriptions: [Subscription] = []
    }

    /// ``ReconnectPolicy`` as stored (durations in nanoseconds).
    struct Policy: Codable, Equatable, Sendable {
        var initialDelay: Int64?
        var multiplier: Double
        var maximumDelay: Int64
        var jitter: Double
        var maximumAttempts: Int?
    }

    var format = Self.formatName
    var version = Self.currentVersion
    var identifier: String
    var adapter: String
    var peripherals: [Peripheral] = []
    /// The services a running scan looks for (empty: every advertiser); nil when none runs.
    var scanServices: [String]?
    /// The services running passive scans look for (``ScanOptions/passive``); nil when none runs.
    var passiveScanServices: [String]?

    init(identifier: String, adapter: String) {
        self.identifier = identifier
        self.adapter = adapter
    }

    /// Whether a decoded file is one of ours, for this identifier, in a version this code reads.
    func isUsable(for identifier: String) -> Bool {
        format == Self.formatName && version == Self.currentVersion && self.identifier == identifier
    }

    // MARK: Transitions

    /// The app connected `id` (or a reconnection brought it back): kept, with `policy`.
    mutating func connected(_ id: PeripheralID, policy: Policy) -> Bool {
        if let index = peripherals.firstIndex(where: { $0.id == id }) {
            guard peripherals[index].policy != policy else { return false }
            peripherals[index].policy = policy
            return true
        }
        peripherals.append(Peripheral(id: id, policy: policy))
        return true
    }

    /// The app disconnected `id`: forgotten, with its subscriptions.
    mutating func disconnected(_ id: PeripheralID) -> Bool {
        guard let index = peripherals.firstIndex(where: { $0.id == id }) else { return false }
        peripherals.remove(at: index)
        return true
    }

    /// The app changed the reconnect policy of a kept peripheral.
    mutating func policyChanged(_ id: PeripheralID, to policy: Policy) -> Bool {
        guard let index = peripherals.firstIndex(where: { $0.id == id }), peripherals[index].policy != policy else {
            return false
        }
        peripherals[index].policy = policy
        return true
    }

    /// A characteristic of a kept peripheral got its first live iteration (`live`) or lost its last.
    mutating func subscription(_ subscription: Subscription, of id: PeripheralID, live: Bool) -> Bool {
        guard let index = peripherals.firstIndex(where: { $0.id == id }) else { return false }
        let present = peripherals[index].subscriptions.contains(subscription)
        guard present != live else { return false }
        if live {
            peripherals[index].subscriptions.append(subscription)
        } else {
            peripherals[index].subscriptions.removeAll { $0 == subscription }
        }
        return true
    }

    /// The running scans' filter now (nil: none runs); `passive` for the passive scans'.
    mutating func scanning(_ services: [String]?, passive: Bool = false) -> Bool {
        if passive {
            guard passiveScanServices != services else { return false }
            passiveScanServices = services
        } else {
            guard scanServices != services else { return false }
            scanServices = services
        }
        return true
    }
}

extension RestorationRecord.Policy {
    init(_ policy: ReconnectPolicy) {
        initialDelay = policy.initialDelay.map(Self.nanoseconds)
        multiplier = policy.multiplier
        maximumDelay = Self.nanoseconds(policy.maximumDelay)
        jitter = policy.jitter
        maximumAttempts = policy.maximumAttempts
    }

    /// The policy stored, with its values brought back into the ranges ``ReconnectPolicy`` keeps.
    var reconnectPolicy: ReconnectPolicy {
        guard let initialDelay else { return .never }
        return .exponentialBackoff(
            initial: .nanoseconds(max(0, initialDelay)), multiplier: multiplier.isFinite ? multiplier : 2,
            maximum: .nanoseconds(max(0, maximumDelay)), jitter: jitter.isFinite ? jitter : 0,
            maximumAttempts: maximumAttempts.map { max(1, $0) })
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int64.max : scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
