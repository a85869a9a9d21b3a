import BlueZ
import DBus
import Foundation
import Synchronization

/// One lifetime of the simulated bluetoothd: a bus connection that owns `org.bluez` and
/// exports its object tree. A restart is a new `Daemon` under a new unique name, as when the
/// real daemon restarts.
final class Daemon: Sendable {
    let connection: Connection
    let core: SimulatorCore
    let generation: Int
    private let tasks = PosixMutex<[Task<Void, Never>]>([])
    /// Actions set to run after a delay (``schedule(_:after:_:)``) that have not run yet.
    let delayedActions = Atomic<Int>(0)
    /// Whether the scan ticker runs (changed only with the state locked).
    let scanTicking = Atomic<Bool>(false)

    private init(connection: Connection, core: SimulatorCore, generation: Int) {
        self.connection = connection
        self.core = core
        self.generation = generation
    }

    var profile: BlueZProfile { core.profile }
    var options: SimulatorOptions { core.options }

    /// Connects, exports the tree, then takes `org.bluez`, so a client that sees the name
    /// appear finds the objects already there.
    static func start(core: SimulatorCore, bus: Connection.Bus) async throws(DBusError) -> Daemon {
        var connectionOptions = ConnectionOptions()
        connectionOptions.exportConventions = .gdbus
        let connection = try await Connection(bus: bus, options: connectionOptions)
        let generation = core.state.withLock { state -> Int in
            state.generation += 1
            return state.generation
        }
        let daemon = Daemon(connection: connection, core: core, generation: generation)
        do throws(DBusError) {
            try daemon.exportInitialTree()
            let owners = try await connection.nameOwnerChanges()
            daemon.watchClients(owners)
            try await takeBusName(connection)
        } catch {
            daemon.shutdown()
            throw error
        }
        daemon.startRadio()
        return daemon
    }

    /// Takes `org.bluez`. After a restart the bus daemon may not yet have seen the previous
    /// daemon's connection hang up, so a name still owned is asked for again for a short while
    /// (the previous owner is ours and going); anyone else holding it is an error.
    private static func takeBusName(_ connection: Connection) async throws(DBusError) {
        let deadline = ContinuousClock.now + .seconds(3)
        while true {
            let reply = try await connection.requestName(BlueZService.busName, flags: [.doNotQueue])
            if reply == .primaryOwner || reply == .alreadyOwner { return }
            guard ContinuousClock.now < deadline, !Task.isCancelled else {
                throw DBusError(.nameNotOwned, message: "org.bluez is owned by someone else on this bus")
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Stops the daemon: the bus sees `org.bluez` lose its owner and every object vanish.
    func shutdown() {
        let running = tasks.withLock { tasks in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in running { task.cancel() }
        core.state.withLock { state in
            // No longer current from here on: a task or call of this daemon that is already
            // under way finds it stopped, instead of acting on the state the next daemon is
            // being built from while that one is still connecting.
            if isCurrent(state) { state.generation += 1 }
            for device in state.devices.values {
                for reply in device.pendingConnects {
                    reply.fail(DBusError.reply(BlueZErrorName.failed, BlueZErrorMessage.bredrConnectionCanceled))
                }
                for channel in device.acquiredNotify.values { channel.hangUp() }
                for channel in device.acquiredWrite.values { channel.hangUp() }
            }
            state.devices.removeAll()
            releaseAgents(&state)
            state.discovery.removeAll()
            state.filters.removeAll()
        }
        connection.close()
    }

    func addTask(_ task: Task<Void, Never>) {
        tasks.withLock { $0.append(task) }
    }

    /// Whether this daemon is still the current one.
    func isCurrent(_ state: SimState) -> Bool { state.generation == generation }

    // MARK: The tree at start-up

    private func exportInitialTree() throws(DBusError) {
        connection.addObjectManager(at: .root)
        try connection.export(
            [
                ExportedInterface(BlueZInterface.agentManager1, methods: try agentManagerMethods()),
                ExportedInterface(try InterfaceName("org.bluez.ProfileManager1")),
            ], at: BlueZService.managerPath)
        try core.state.withLock { (state: inout SimState) throws(DBusError) in
            if state.adapters.isEmpty {
                for (index, text) in options.adapters.enumerated() {
                    state.adapters.append(
                        AdapterState(
                            index: index, path: try BlueZPath.adapter(index: index),
                            address: try BluetoothAddress(text), powered: options.poweredOnStart))
                }
            } else {
                // bluetoothd restarted: AutoEnable powers adapters again; discovery is gone, and
                // so are the registrations the adapters advertised to each other.
                state.peripherals = state.peripherals.filter { $0.value.servedBy == nil }
                for index in state.adapters.indices {
                    state.adapters[index].discovering = false
                    state.adapters[index].powered = options.poweredOnStart
                }
            }
            for adapter in state.adapters {
                try connection.export(adapterInterfaces(adapter), at: adapter.path)
            }
            for address in state.stored.sorted() {
                guard let record = state.peripherals[address] else { continue }
                for adapter in state.adapters {
                    try addDevice(&state, record.definition, address: address, adapter: adapter, fromStorage: true)
                }
            }
        }
    }

    // MARK: Clients leaving the bus

    /// bluetoothd drops a client's discovery sessions, filters and notify sessions when its
    /// unique name leaves the bus (quirk Q14).
    private func watchClients(_ changes: NameOwnerChanges) {
        let task = Task { [weak self] in
            for await change in changes {
                guard change.newOwner == nil, change.name.isUnique, let self else { continue }
                self.clientLeft(change.name)
            }
        }
        addTask(task)
    }

    /// bluetoothd's `discovery_disconnect` for a client with a discovery session or a filter
    /// (`discovery_stop`, in every release). The last session going stops the discovery. A
    /// client with only a filter is stopped as if it were the last session whenever fewer
    /// than two others discover: with none running (the idle branch) `Discovering=false` is
    /// announced all the same (the real 5.66's trace ends with it); with one other client
    /// discovering, the kernel's discovery is stopped under it (`stop_discovery_complete`),
    /// its session staying registered but hearing nothing, until it stops and starts again.
    private func discoveryClientLeft(_ state: inout SimState, _ client: BusName, adapter index: Int) {
        let hadFilter = state.filters[index]?.removeValue(forKey: client) != nil
        let hadSession = state.discovery[index]?.removeValue(forKey: client) != nil
        let others = state.discovery[index]?.count ?? 0
        guard hadFilter || hadSession, others == 0 || (!hadSession && others == 1) else { return }
        if others == 1 {
            state.adapters[index].discovering = false
            return emit(state.adapters[index].path, BlueZInterface.adapter1, set: [("Discovering", .boolean(false))])
        }
        if state.adapters[index].discovering {
            stopDiscovery(&state, adapter: index)
        } else {
            emit(state.adapters[index].path, BlueZInterface.adapter1, set: [("Discovering", .boolean(false))])
        }
    }

    private func clientLeft(_ client: BusName) {
        core.state.withLock { state in
            guard isCurrent(state) else { return }
            for index in state.adapters.indices { discoveryClientLeft(&state, client, adapter: index) }
            state.monitors.adopt(generation: generation)
            state.monitors.remove { $0.owner == client }
            for path in Array(state.devices.keys) {
                guard var device = state.devices[path] else { continue }
                for characteristic in Array(device.notifySessions.keys) {
                    guard device.notifySessions[characteristic]?.remove(client) != nil else { continue }
                    if device.notifySessions[characteristic]?.isEmpty ?? false {
                        device.notifySessions[characteristic] = nil
                        setNotifying(false, characteristic)
                    }
                }
                for (characteristic, channel) in device.acquiredNotify where channel.owner == client {
                    channel.hangUp()
                    device.acquiredNotify[characteristic] = nil
                    announceNotifyAcquired(false, characteristic)
                }
                for (characteristic, channel) in device.acquiredWrite where channel.owner == client {
                    channel.hangUp()
                    device.acquiredWrite[characteristic] = nil
                    emit(characteristic, BlueZInterface.gattCharacteristic1, set: [("WriteAcquired", .boolean(false))])
                }
                state.devices[path] = device
            }
            serverClientLeft(&state, client)
            pairingClientLeft(&state, client)
        }
    }

    // MARK: Emission helpers

    /// One coalesced PropertiesChanged; failures (an object already gone) are ignored, as a
    /// real daemon has nothing to say about a vanished object.
    func emit(
        _ path: ObjectPath, _ interface: InterfaceName, set: [(String, DBusValue)] = [], remove: [String] = []
    ) {
        try? connection.updateProperties(set, removing: remove, interface: interface, path: path)
    }

    /// Announces an attribute's new `Value`: reads and notifications, the hottest signal there is.
    func emitValue(_ value: Data, _ path: ObjectPath, _ interface: InterfaceName) {
        try? connection.setProperty("Value", to: .bytes(value), interface: interface, path: path)
    }
}
