import BlueZ
import DBus
import Foundation

extension Daemon {
    /// `AdvertisementMonitorManager1` of an adapter, offered only by an experimental daemon
    /// (``SimulatorOptions/experimental``), as bluetoothd offers it only with `--experimental`.
    func monitorManagerInterfaces(adapter index: Int) throws(DBusError) -> [ExportedInterface] {
        guard options.experimental else { return [] }
        return [
            ExportedInterface(
                BlueZInterface.advertisementMonitorManager1,
                methods: [
                    .deferred(BlueZMethod.registerMonitor, in: try Signature("o")) { [weak self] call, reply in
                        self?.registerMonitor(call, reply, adapter: index)
                    },
                    .deferred(BlueZMethod.unregisterMonitor, in: try Signature("o")) { [weak self] call, reply in
                        self?.unregisterMonitor(call, reply, adapter: index)
                    },
                ],
                properties: [
                    ExportedProperty(
                        "SupportedMonitorTypes",
                        value: .array(.string, [.string(AdvertisementMonitorProperties.orPatterns)])),
                    ExportedProperty("SupportedFeatures", value: .array(.string, [])),
                ])
        ]
    }

    /// `RegisterMonitor(o root)`: answered at once; the application's monitors are then read
    /// with `GetManagedObjects` under the root, each valid one activated (`Activate()`), each
    /// other one released (`Release()`), as bluetoothd does.
    private func registerMonitor(_ call: DBusMessage, _ reply: MethodReply, adapter index: Int) {
        guard let key = Self.objectKey(call, adapter: index) else { return reply.fail(Self.invalidArguments) }
        let accepted = core.state.withLock { state -> Bool in
            guard isCurrent(state) else { return false }
            state.monitors.adopt(generation: generation)
            guard state.monitors.active[key] == nil, !state.monitors.pending.contains(key) else {
                reply.fail(Self.alreadyExists)
                return false
            }
            state.monitors.pending.insert(key)
            return true
        }
        guard accepted else { return }
        reply.succeed()
        addTask(Task { [weak self] in await self?.activateMonitors(key) })
    }

    private func activateMonitors(_ key: RegistrationKey) async {
        let reply = try? await connection.call(
            destination: key.owner, path: key.path, interface: .objectManager, member: BlueZMethod.getManagedObjects,
            arguments: [], timeout: options.serverRequestTimeout)
        var taken: [MonitorRegistry.Monitor] = []
        var released: [ObjectPath] = []
        if case .dictionary(_, _, let objects)? = reply?.body.first {
            for entry in objects {
                guard case .objectPath(let path) = entry.key, path.isDescendant(of: key.path),
                    case .dictionary(_, _, let interfaces) = entry.value,
                    let monitor = interfaces.first(where: {
                        $0.key == .string(BlueZInterface.advertisementMonitor1.rawValue)
                    }),
                    case .dictionary(_, _, let entries) = monitor.value
                else { continue }
                var properties: [String: DBusValue] = [:]
                for property in entries {
                    if case .string(let name) = property.key { properties[name] = property.value }
                }
                if let parsed = try? AdvertisementMonitorProperties(properties: properties), parsed.refusal == nil {
                    taken.append(MonitorRegistry.Monitor(path: path, properties: parsed))
                } else {
                    released.append(path)
                }
            }
        }
        let kept = core.state.withLock { state -> Bool in
            guard isCurrent(state), state.monitors.pending.remove(key) != nil else { return false }
            guard !taken.isEmpty else { return true }
            state.monitors.active[key] = taken
            if state.monitors.listeningSince[key.adapter] == nil {
                state.monitors.listeningSince[key.adapter] = MonotonicNanos.now()
            }
            startScanTicker(&state)
            return true
        }
        guard kept else { return }
        for path in released { tellMonitor(key.owner, path, BlueZMethod.release) }
        for monitor in taken { tellMonitor(key.owner, monitor.path, BlueZMethod.activate) }
    }

    /// `UnregisterMonitor(o root)`: the root's monitors stop; unknown roots are refused.
    private func unregisterMonitor(_ call: DBusMessage, _ reply: MethodReply, adapter index: Int) {
        guard let key = Self.objectKey(call, adapter: index) else { return reply.fail(Self.invalidArguments) }
        core.state.withLock { state in
            guard isCurrent(state) else { return }
            state.monitors.adopt(generation: generation)
            guard state.monitors.active[key] != nil || state.monitors.pending.contains(key) else {
                return reply.fail(Self.doesNotExist)
            }
            state.monitors.remove { $0 == key }
            reply.succeed()
        }
    }

    /// A `[noreply]` call to an application's monitor (`Activate`, `Release`, `DeviceFound`).
    func tellMonitor(_ owner: BusName, _ path: ObjectPath, _ member: MemberName, _ arguments: [DBusValue] = []) {
        let message = DBusMessage(
            kind: .methodCall, path: path, interface: BlueZInterface.advertisementMonitor1, member: member,
            destination: owner, noReplyExpected: true, body: arguments)
        try? connection.send(message)
    }

    /// Tells each monitor of the adapter that matches an advertisement's AD `structures`, and
    /// has not yet, that it found the device at `path`.
    func reportToMonitors(
        _ state: inout SimState, _ structures: [(type: UInt8, data: Data)], address: BluetoothAddress,
        path: ObjectPath, adapter index: Int
    ) {
        let found = state.monitors.newlyMatching(adapter: index, address: address, structures: structures)
        for (owner, monitor) in found { tellMonitor(owner, monitor, BlueZMethod.deviceFound, [.objectPath(path)]) }
    }
}
