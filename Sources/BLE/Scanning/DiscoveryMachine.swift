import BlueZ
import DBus

/// The scans of one central sharing BlueZ's one discovery session per bus connection, as a
/// pure state machine: events in, actions out, no I/O, no continuation resumed inside.
///
/// - The first scan starts discovery (its filter first); later ones widen the filter, which is
///   the union of theirs (``DiscoverySessions/mergedFilter``); the last one leaving stops it.
/// - One call to bluetoothd at a time. Scans that come and go meanwhile are taken into account
///   when it is answered: the calls that follow bring the adapter to what the scans want then,
///   and each caller is resumed once the adapter is there (or its call failed).
/// - A failed `SetDiscoveryFilter` or `StartDiscovery` fails the scans that waited for it;
///   `InProgress` to a start means this connection's session already runs. Scans already
///   there that need the same call (a restart that bluetoothd refuses) end with the error too:
///   the call is never made again for them, which would loop for as long as bluetoothd
///   refuses (and recurse without end on a closed connection, whose calls fail at once). A
///   failed stop changes nothing (power-off or a restart stopped it already).
/// - bluetoothd can stop the kernel's discovery under a central that still has a session (a
///   client that had set a filter leaving, BlueZ 5.66 and later): the shell reports the
///   adapter's `Discovering=false` with its serial, and when it comes after this central's
///   last start was answered, discovery is stopped and started again.
/// - bluetoothd leaving or the adapter powering off ends every session: ``reset()``.
struct DiscoveryMachine<Waiter> {
    /// A call to `Adapter1`.
    enum Call: Equatable {
        case setFilter([String: DBusValue])
        case start
        case stop
        /// The stop before starting again a discovery bluetoothd stopped under this central.
        case restart
    }

    /// What the shell must do, in order.
    enum Action {
        /// Make the call; report ``finished(_:serial:adapterDiscovering:)``.
        case send(Call)
        /// Resume a caller.
        case resume(Waiter, Result<Void, BLEError>)
        /// End these running scans with `error`: their discovery could not be brought back.
        case fail([UInt64], BLEError)
    }

    /// The scans, by id.
    private(set) var sessions = DiscoverySessions()
    private var inFlight: Call?
    /// Callers of ``add(_:_:_:refusal:)`` waiting for the adapter to discover with their filter.
    private var joining: [(id: UInt64, waiter: Waiter)] = []
    /// Callers of ``remove(_:_:)`` waiting for the calls their leaving made.
    private var leaving: [Waiter] = []
    /// A `Discovering=false` (its serial) seen while a call was in flight, looked at after it.
    private var stoppedAt: UInt32?

    /// Whether discovery runs for this central.
    var isRunning: Bool { sessions.running }

    /// A new scan id.
    mutating func makeID() -> UInt64 {
        defer { sessions.nextID += 1 }
        return sessions.nextID
    }

    /// A scan asks for discovery; `refusal` is the error when the adapter cannot scan now.
    mutating func add(_ id: UInt64, _ request: ScanRequest, _ waiter: Waiter, refusal: BLEError?) -> [Action] {
        if let refusal { return [.resume(waiter, .failure(refusal))] }
        sessions.scans[id] = request
        joining.append((id, waiter))
        return advance()
    }

    /// A scan leaves; the last one leaving stops discovery.
    mutating func remove(_ id: UInt64, _ waiter: Waiter) -> [Action] {
        guard sessions.scans.removeValue(forKey: id) != nil else { return [.resume(waiter, .success(()))] }
        leaving.append(waiter)
        return advance()
    }

    /// The call in flight was answered (`serial`: the reply's); `adapterDiscovering` is what
    /// the mirror says of the adapter now.
    mutating func finished(_ result: Result<Void, BLEError>, serial: UInt32?, adapterDiscovering: Bool) -> [Action] {
        guard let call = inFlight else { return [] }
        inFlight = nil
        var actions: [Action] = []
        switch (call, result) {
        case (.setFilter(let filter), .success):
            sessions.appliedFilter = filter
        case (.start, .success):
            sessions.running = true
            sessions.startSerial = serial
        case (.start, .failure(let error)) where error.code == .inProgress:
            // This connection already has a session (e.g. started before a state glitch).
            sessions.running = true
            sessions.startSerial = nil
        case (.setFilter, .failure(let error)), (.start, .failure(let error)):
            for (id, waiter) in joining {
                sessions.scans[id] = nil
                actions.append(.resume(waiter, .failure(error)))
            }
            joining.removeAll()
            // What the scans left still want is the call that just failed: they end instead.
            if !sessions.scans.isEmpty, !sessions.running || sessions.mergedFilter != sessions.appliedFilter {
                actions.append(.fail(sessions.scans.keys.sorted(), error))
                sessions.scans.removeAll()
            }
        case (.stop, _), (.restart, _):
            break
        }
        if let serial = stoppedAt {
            stoppedAt = nil
            actions += stoppedUnderUs(serial: serial, adapterDiscovering: adapterDiscovering)
        }
        return actions + advance()
    }

    /// The adapter said `Discovering=false` in a signal bluetoothd numbered `serial` while the
    /// adapter is powered. One from before the answer to this central's last start is ignored
    /// (a client that had set a filter leaving while the start was pending, whose own
    /// `Discovering=true` follows), and so is one when the adapter discovers again.
    mutating func stoppedUnderUs(serial: UInt32, adapterDiscovering: Bool) -> [Action] {
        guard inFlight == nil else {
            stoppedAt = serial
            return []
        }
        guard sessions.running, !sessions.scans.isEmpty, !adapterDiscovering,
            sessions.startSerial.map({ PropertyRefreshes.isOlder($0, than: serial) }) ?? true
        else { return [] }
        inFlight = .restart
        sessions.running = false
        return [.send(.restart)]
    }

    /// Whether a `Discovering=false` numbered `serial` is news for this central (see
    /// ``stoppedUnderUs(serial:adapterDiscovering:)``), before the mirror is read for it.
    func mayHaveStoppedUnderUs(serial: UInt32) -> Bool {
        serial != 0 && sessions.running
            && (sessions.startSerial.map { PropertyRefreshes.isOlder($0, than: serial) } ?? true)
    }

    /// bluetoothd left or the adapter powered off: no session runs and no filter is set.
    mutating func reset() {
        sessions.running = false
        sessions.appliedFilter = nil
    }

    /// The next call towards what the scans want, or the callers told it is there.
    private mutating func advance() -> [Action] {
        guard inFlight == nil else { return [] }
        if sessions.scans.isEmpty {
            if sessions.running {
                sessions.running = false
                sessions.appliedFilter = nil
                inFlight = .stop
                return [.send(.stop)]
            }
        } else {
            let filter = sessions.mergedFilter
            if filter != sessions.appliedFilter {
                inFlight = .setFilter(filter)
                return [.send(.setFilter(filter))]
            }
            if !sessions.running {
                inFlight = .start
                return [.send(.start)]
            }
        }
        let resumed = joining.map { Action.resume($0.waiter, .success(())) } + leaving.map { .resume($0, .success(())) }
        joining.removeAll()
        leaving.removeAll()
        return resumed
    }
}
