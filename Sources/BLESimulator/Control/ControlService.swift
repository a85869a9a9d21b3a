import DBus

/// The simulator's control plane on the bus: a connection of its own that owns
/// `org.swiftble.Simulator` and serves `org.swiftble.Simulator1` (see
/// ``SimulatorControlInterface`` for why it is not the daemon's connection).
///
/// It lives as long as the ``Simulator``: bluetoothd restarts leave it alone, so a `Restart()`
/// call is answered after the new daemon owns `org.bluez`, and callers never race a re-export.
final class ControlService: Sendable {
    let connection: Connection
    /// Notification runs started over the bus, by id, cancelled at ``close()``.
    private let runs = PosixMutex<(next: Int, tasks: [Int: Task<Void, Never>])>((0, [:]))

    private init(connection: Connection) {
        self.connection = connection
    }

    /// Connects to `bus`, exports the control object, then takes the well-known name, so a
    /// client that sees the name appear finds the object already there.
    static func start(bus: Connection.Bus, simulator: Simulator) async throws(DBusError) -> ControlService {
        let service = ControlService(connection: try await Connection(bus: bus))
        do throws(DBusError) {
            try service.connection.export(
                [service.interface(simulator: simulator)], at: SimulatorControlInterface.objectPath)
            let reply = try await service.connection.requestName(
                SimulatorControlInterface.busName, flags: [.doNotQueue])
            guard reply == .primaryOwner || reply == .alreadyOwner else {
                throw DBusError(
                    .nameNotOwned, message: "\(SimulatorControlInterface.busName) is owned by someone else on this bus")
            }
        } catch {
            service.close()
            throw error
        }
        return service
    }

    /// Cancels the runs in progress and leaves the bus (the name goes with the connection).
    func close() {
        let running = runs.withLock { runs in
            defer { runs.tasks.removeAll() }
            return Array(runs.tasks.values)
        }
        for task in running { task.cancel() }
        connection.close()
    }

    /// Runs `work` in the background until it ends or ``close()`` cancels it; the method that
    /// started it has already answered.
    func launch(_ work: @escaping @Sendable () async -> Void) {
        runs.withLock { runs in
            let id = runs.next
            runs.next += 1
            runs.tasks[id] = Task { [weak self] in
                await work()
                _ = self?.runs.withLock { $0.tasks.removeValue(forKey: id) }
            }
        }
    }
}
