import DBus
import Foundation

/// One message of a ``Transcript``: a call the client made, the reply or error it got, or a
/// signal it received.
struct TranscriptEntry: Sendable, CustomStringConvertible {
    /// What kind of message.
    enum Kind: Sendable, Hashable {
        case call, reply, error, signal
    }

    var kind: Kind
    /// The object path of a call or signal; for replies and errors, the path of the call.
    var path: ObjectPath?
    /// The interface of a call or signal; for replies and errors, the interface of the call.
    var interface: InterfaceName?
    /// The method or signal name; for replies and errors, the method answered.
    var member: String
    /// The error name of an error.
    var errorName: String?
    /// The arguments (for an error: its message).
    var body: [DBusValue]
    /// Who sent it (replies and signals).
    var sender: BusName?
    /// The sender's serial (replies and signals), which orders one sender's messages.
    var serial: UInt32?

    /// Whether this is `PropertiesChanged` of `interface` on `path`.
    func isPropertiesChanged(_ path: ObjectPath, _ interface: InterfaceName) -> Bool {
        kind == .signal && member == "PropertiesChanged" && self.path == path
            && body.first == .string(interface.rawValue)
    }

    /// The `changed` dict of a `PropertiesChanged`, by name (variants unwrapped).
    var changedProperties: [String: DBusValue] {
        guard member == "PropertiesChanged", body.count == 3, case .dictionary(_, _, let entries) = body[1] else {
            return [:]
        }
        var out: [String: DBusValue] = [:]
        for entry in entries {
            if case .string(let name) = entry.key { out[name] = entry.value.unwrappingVariant }
        }
        return out
    }

    /// The `invalidated` names of a `PropertiesChanged`.
    var invalidatedProperties: [String] {
        guard member == "PropertiesChanged", body.count == 3, case .array(_, let names) = body[2] else { return [] }
        return names.compactMap { if case .string(let name) = $0 { name } else { nil } }
    }

    /// The object an `InterfacesAdded`/`InterfacesRemoved` is about.
    var objectManagerSubject: ObjectPath? {
        guard member == "InterfacesAdded" || member == "InterfacesRemoved",
            case .objectPath(let path)? = body.first
        else { return nil }
        return path
    }

    /// The interface names of an `InterfacesAdded` (dict keys, in order) or `InterfacesRemoved`.
    var objectManagerInterfaces: [String] {
        guard body.count == 2 else { return [] }
        switch body[1] {
        case .dictionary(_, _, let entries):
            return entries.compactMap { if case .string(let s) = $0.key { s } else { nil } }
        case .array(_, let names): return names.compactMap { if case .string(let s) = $0 { s } else { nil } }
        default: return []
        }
    }

    /// The properties one interface of an `InterfacesAdded` carries (variants unwrapped).
    func addedProperties(of interface: InterfaceName) -> [String: DBusValue]? {
        guard member == "InterfacesAdded", body.count == 2, case .dictionary(_, _, let entries) = body[1] else {
            return nil
        }
        guard let dict = entries.first(where: { $0.key == .string(interface.rawValue) })?.value else { return nil }
        return TreeValue.properties(dict)
    }

    /// The error message of an error entry.
    var errorMessage: String? {
        guard kind == .error, case .string(let text)? = body.first else { return nil }
        return text
    }

    /// The trace line: `→ call`, `← reply`, `✗ error`, `★ signal` (see ``Trace``).
    var description: String {
        let path = self.path?.rawValue ?? "-"
        switch kind {
        case .call:
            return "→ \(path) \(Trace.short(interface)).\(member) \(GVariantText.tuple(body))"
        case .reply:
            return "← \(member) \(GVariantText.tuple(body))"
        case .error:
            return "✗ \(member) \(errorName ?? "?") \(GVariantText.tuple(body))"
        case .signal:
            switch member {
            case "InterfacesAdded", "InterfacesRemoved":
                let subject = objectManagerSubject?.rawValue ?? "?"
                return "★ \(member) \(subject) [\(objectManagerInterfaces.joined(separator: ", "))]"
            case "NameOwnerChanged":
                return "★ NameOwnerChanged \(GVariantText.tuple(body))"
            default:
                return "★ \(path) \(member) \(GVariantText.tuple(body))"
            }
        }
    }
}

/// Everything one client connection saw, in the order the bus delivered it.
///
/// Signals are appended in delivery order (one subscription keeps that order). A method
/// return is placed among the signals by the daemon's serial, so "PropertiesChanged before
/// the reply" is recorded exactly as the daemon sent it even though the reply wakes another
/// task. Error replies carry no serial through the `DBus` API; they are appended once the
/// signals delivered before them are recorded, so a signal sent just after an error may
/// precede it: tests check the order of errors against signals only loosely.
final class Transcript: Sendable {
    private struct Waiter: Sendable {
        let predicate: @Sendable (State) -> Bool
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State: Sendable {
        var entries: [TranscriptEntry] = []
        /// The last barrier the recording reached (see ``RecordingClient``'s `settle`).
        var barrier: UInt32 = 0
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0

        /// Removes and returns the waiters whose predicate now holds.
        mutating func satisfiedWaiters() -> [CheckedContinuation<Void, any Error>] {
            var ready: [CheckedContinuation<Void, any Error>] = []
            for (id, waiter) in waiters where waiter.predicate(self) {
                ready.append(waiter.continuation)
                waiters[id] = nil
            }
            return ready
        }
    }

    private let state = PosixMutex(State())

    /// All entries so far.
    var entries: [TranscriptEntry] { state.withLock { $0.entries } }

    /// A position to read from later with ``since(_:)``; take it while no call is in flight.
    var mark: Int { state.withLock { $0.entries.count } }

    /// The entries after `mark`.
    func since(_ mark: Int) -> [TranscriptEntry] {
        state.withLock { Array($0.entries.dropFirst(mark)) }
    }

    /// The trace lines after `mark`, optionally only of some kinds.
    func lines(since mark: Int = 0, kinds: Set<TranscriptEntry.Kind> = [.call, .reply, .error, .signal]) -> [String] {
        since(mark).filter { kinds.contains($0.kind) }.map(\.description)
    }

    /// The whole transcript as text, for failure messages.
    var dump: String { entries.map(\.description).joined(separator: "\n") }

    /// Records `entry`: a method return goes before any signal of the same sender with a
    /// higher serial (one libdbus connection numbers its messages in sending order; the bus
    /// driver's broadcasts are not numbered per recipient, so only replies move); anything
    /// else is appended. Record a reply after ``RecordingClient/settle()``.
    func record(_ entry: TranscriptEntry) {
        let ready: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            var index = state.entries.endIndex
            if entry.kind == .reply, let sender = entry.sender, let serial = entry.serial,
                let later = state.entries.firstIndex(where: {
                    $0.kind == .signal && $0.sender == sender && ($0.serial ?? 0) > serial
                })
            {
                index = later
            }
            state.entries.insert(entry, at: index)
            return state.satisfiedWaiters()
        }
        for continuation in ready { continuation.resume() }
    }

    /// Notes that the recording reached barrier `number`: every message delivered before it
    /// has been recorded.
    func reach(barrier number: UInt32) {
        let ready = state.withLock { state in
            state.barrier = max(state.barrier, number)
            return state.satisfiedWaiters()
        }
        for continuation in ready { continuation.resume() }
    }

    /// Waits until the recording reached barrier `number`.
    func wait(forBarrier number: UInt32) async throws {
        try await wait("barrier \(number)", timeout: Fidelity.eventDeadline) { $0.barrier >= number }
    }

    /// Waits until `predicate` holds for the recorded entries, failing after `timeout`.
    func wait(
        _ what: String, timeout: Duration = Fidelity.eventDeadline,
        until predicate: @escaping @Sendable ([TranscriptEntry]) -> Bool
    ) async throws {
        try await wait(what, timeout: timeout) { (state: State) in predicate(state.entries) }
    }

    private func wait(
        _ what: String, timeout: Duration, until predicate: @escaping @Sendable (State) -> Bool
    ) async throws {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled, let self else { return }
            let waiter = self.state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: TranscriptTimeout(what: what, transcript: self.dump))
        }
        defer { timer.cancel() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let satisfied = state.withLock { state -> Bool in
                if predicate(state) { return true }
                state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                return false
            }
            if satisfied { continuation.resume() }
        }
    }

    /// Waits for an entry after `mark` that satisfies `match`, and returns it.
    @discardableResult
    func first(
        _ what: String, since mark: Int = 0, timeout: Duration = Fidelity.eventDeadline,
        where match: @escaping @Sendable (TranscriptEntry) -> Bool
    ) async throws -> TranscriptEntry {
        try await wait(what, timeout: timeout) { entries in entries.dropFirst(mark).contains(where: match) }
        guard let entry = since(mark).first(where: match) else {
            throw TranscriptTimeout(what: what, transcript: dump)
        }
        return entry
    }

    /// Waits until `count` entries after `mark` satisfy `match`, and returns them.
    @discardableResult
    func count(
        _ count: Int, _ what: String, since mark: Int = 0, timeout: Duration = Fidelity.eventDeadline,
        where match: @escaping @Sendable (TranscriptEntry) -> Bool
    ) async throws -> [TranscriptEntry] {
        try await wait(what, timeout: timeout) { entries in entries.dropFirst(mark).filter(match).count >= count }
        return since(mark).filter(match)
    }
}

/// A wait on a ``Transcript`` ran out of time; the message holds what was recorded.
struct TranscriptTimeout: Error, CustomStringConvertible {
    let what: String
    let transcript: String
    var description: String { "timed out waiting for \(what); transcript:\n\(transcript)" }
}
