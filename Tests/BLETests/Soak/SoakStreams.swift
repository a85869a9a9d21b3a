import BLESimulator
import DBus
import Foundation

/// What the simulator delivered from each peripheral's notifying and indicating
/// characteristic, in order: the log every subscription (``SoakWatch``) is checked against.
final class SoakStreams: Sendable {
    struct Key: Hashable, Sendable {
        let peripheral: Int
        let kind: SoakPayload.Kind
    }

    private struct State {
        var delivered: [Key: [UInt32]] = [:]
        var next: UInt32 = 0
    }

    private let state = PosixMutex(State())

    /// Sends the next value of `key` from the simulator, logged when it was delivered; whether
    /// it was. Under the log's lock, so that a subscription's mark taken meanwhile falls
    /// before or after the value as it did at the simulator.
    @discardableResult
    func send(_ key: Key, through simulator: Simulator) -> Bool {
        state.withLock { state in
            state.next += 1
            let payload = SoakPayload(key.kind, peripheral: key.peripheral, sequence: state.next)
            let uuid = key.kind == .indication ? "FFF4" : "FFF3"
            let address = SoakPeripherals.address(key.peripheral)
            let delivered =
                ((try? simulator.notify(address: address, characteristic: uuid, value: payload.data)) ?? 0) > 0
            if delivered { state.delivered[key, default: []].append(payload.sequence) }
            return delivered
        }
    }

    /// Logs values as delivered without sending them (for the checks' own tests).
    func record(_ sequences: [UInt32], for key: Key) {
        state.withLock { $0.delivered[key, default: []] += sequences }
    }

    /// Where `key`'s log stands now.
    func mark(_ key: Key) -> Int { state.withLock { $0.delivered[key]?.count ?? 0 } }

    /// What `key`'s log holds (all of it, or from `start` up to `end`).
    func delivered(_ key: Key, from start: Int = 0, to end: Int? = nil) -> [UInt32] {
        state.withLock { state in
            let log = state.delivered[key] ?? []
            return Array(log[min(start, log.count)..<min(end ?? log.count, log.count)])
        }
    }

    /// How many values were delivered, of every key.
    var deliveredCount: Int { state.withLock { $0.delivered.values.reduce(0) { $0 + $1.count } } }
}

/// One subscription's values, checked against the log of its characteristic: every value
/// delivered while it was armed (from its subscribe's return up to its end) must arrive once,
/// in order, intact, and nothing else may arrive but values the simulator delivered.
final class SoakWatch: Sendable {
    let key: SoakStreams.Key
    /// The log's mark when the subscription was confirmed.
    let start: Int
    private let received = PosixMutex<(values: [UInt32], damaged: [String])>(([], []))

    init(_ key: SoakStreams.Key, start: Int) {
        self.key = key
        self.start = start
    }

    func receive(_ value: Data) {
        received.withLock { received in
            guard let payload = SoakPayload(value), payload.kind == key.kind, payload.peripheral == key.peripheral
            else {
                return received.damaged.append("\(value.count) bytes \(value.map { String($0, radix: 16) })")
            }
            received.values.append(payload.sequence)
        }
    }

    var receivedCount: Int { received.withLock { $0.values.count } }

    /// Whether everything delivered in the window up to `end` has arrived.
    func covers(until end: Int, _ streams: SoakStreams) -> Bool {
        let values = Set(received.withLock { $0.values })
        return streams.delivered(key, from: start, to: end).allSatisfy(values.contains)
    }

    /// What is wrong with what arrived, for a subscription armed until `end` (nil: it was ended
    /// by the SDK, at a moment the soak cannot mark, so only values up to the last one that
    /// arrived are expected).
    func problems(until end: Int?, _ streams: SoakStreams) -> [String] {
        let (values, damaged) = received.withLock { ($0.values, $0.damaged) }
        let name = "\(key.kind) subscription of \(key.peripheral)"
        var problems = damaged.map { "\(name): damaged value \($0)" }
        let all = streams.delivered(key)
        let known = Set(all)
        if let stranger = values.first(where: { !known.contains($0) }) {
            problems.append("\(name): received #\(stranger), which the simulator never delivered")
        }
        if values != values.sorted() || Set(values).count != values.count {
            problems.append("\(name): out of order or twice: \(values)")
        }
        let upTo = end ?? values.last.flatMap { last in all.firstIndex(of: last).map { $0 + 1 } } ?? start
        let missing = streams.delivered(key, from: start, to: upTo).filter { !values.contains($0) }
        if !missing.isEmpty { problems.append("\(name): delivered while armed, never received: \(missing)") }
        return problems
    }
}
