import BlueZ
import DBus
import Foundation

extension Daemon {
    /// Adapter1 with the properties of the imitated release.
    func adapterInterfaces(_ adapter: AdapterState) throws(DBusError) -> [ExportedInterface] {
        let index = adapter.index
        var properties: [ExportedProperty] = [
            ExportedProperty("Address", value: .string(adapter.address.description)),
            ExportedProperty("AddressType", value: .string("public")),
            ExportedProperty("Name", value: .string("swift-ble-sim")),
            ExportedProperty("Alias", value: .string("swift-ble-sim"), access: .readwrite),
            ExportedProperty("Class", value: .uint32(adapter.powered ? Self.adapterClass : 0)),
            ExportedProperty(
                "Powered", value: .boolean(adapter.powered), access: .readwrite,
                deferredSet: { [weak self] value, reply in
                    guard case .boolean(let on) = value else { return reply.fail(Self.invalidArguments) }
                    self?.setPoweredCall(on, adapter: index, reply)
                }),
            ExportedProperty("Discoverable", value: .boolean(false), access: .readwrite),
            ExportedProperty("DiscoverableTimeout", value: .uint32(180), access: .readwrite),
            // Bondable only while a default agent is registered (see `defaultAgentChanged`);
            // bluetoothd starts, and restarts, with none.
            ExportedProperty("Pairable", value: .boolean(false), access: .readwrite),
            ExportedProperty("PairableTimeout", value: .uint32(0), access: .readwrite),
            ExportedProperty("Discovering", value: .boolean(false)),
            ExportedProperty("UUIDs", value: .array(.string, [])),
            ExportedProperty("Modalias", value: .string("usb:v1D6Bp0246d0542")),
            ExportedProperty("Roles", value: .array(.string, [.string("central"), .string("peripheral")])),
        ]
        if profile.powerState {
            properties.append(ExportedProperty("PowerState", value: .string(adapter.powered ? "on" : "off")))
            properties.append(ExportedProperty("Connectable", value: .boolean(true), access: .readwrite))
            properties.append(ExportedProperty("Manufacturer", value: .uint16(0x05f1)))
            properties.append(ExportedProperty("Version", value: .byte(0x0c)))
        }
        let methods: [ExportedMethod] = [
            .deferred(BlueZMethod.startDiscovery) { [weak self] call, reply in
                self?.startDiscovery(call, reply, adapter: index)
            },
            .deferred(BlueZMethod.stopDiscovery) { [weak self] call, reply in
                self?.stopDiscoveryCall(call, reply, adapter: index)
            },
            .deferred(BlueZMethod.setDiscoveryFilter, in: try Signature("a{sv}")) { [weak self] call, reply in
                self?.setDiscoveryFilter(call, reply, adapter: index)
            },
            .immediate(BlueZMethod.getDiscoveryFilters, out: try Signature("as")) { [weak self] _ in
                let keys =
                    (self?.profile.disconnectedSignal ?? false) ? DiscoveryFilter.keys583 : DiscoveryFilter.keys566
                return [.array(.string, keys.map { .string($0) })]
            },
            .deferred(BlueZMethod.removeDevice, in: try Signature("o")) { [weak self] call, reply in
                self?.removeDeviceCall(call, reply, adapter: index)
            },
        ]
        return [ExportedInterface(BlueZInterface.adapter1, methods: methods, properties: properties)]
            + (try serverInterfaces(adapter: index)) + (try monitorManagerInterfaces(adapter: index))
    }

    static func error(_ name: String, _ message: String) -> DBusError { DBusError.reply(name, message) }

    /// The adapter's class of device while powered; `adapter_stop` resets it to 0.
    static let adapterClass: UInt32 = 0x6c_010c

    // MARK: Discovery calls

    private func startDiscovery(_ call: DBusMessage, _ reply: MethodReply, adapter index: Int) {
        guard let sender = call.sender else { return reply.fail(Self.error(BlueZErrorName.failed, "no sender")) }
        core.state.withLock { state in
            guard isCurrent(state), state.adapters.indices.contains(index) else { return }
            guard state.adapters[index].powered else {
                return reply.fail(Self.error(BlueZErrorName.notReady, BlueZErrorMessage.notReady))
            }
            if state.discovery[index]?[sender] != nil {
                return reply.fail(
                    Self.error(BlueZErrorName.inProgress, BlueZErrorMessage.operationAlreadyInProgress))
            }
            // A discovery fault's `address` is the adapter's.
            let adapterAddress = state.adapters[index].address
            switch state.takeFault(.startDiscovery, address: adapterAddress.description) {
            case .fail(let name, let message)?: return reply.fail(Self.error(name, message))
            case .attError?, .dropLink?: return reply.fail(Self.kernelRefused)
            case .noReply?: return hold(reply)
            case .delay(let delay)?:
                return schedule(&state, after: delay) { daemon, state in
                    guard state.adapters[index].powered, state.discovery[index]?[sender] == nil else {
                        return reply.fail(Self.error(BlueZErrorName.notReady, BlueZErrorMessage.notReady))
                    }
                    daemon.beginDiscovery(&state, reply, sender, adapter: index)
                }
            case nil: beginDiscovery(&state, reply, sender, adapter: index)
            }
        }
    }

    /// What bluetoothd answers when the kernel refuses an operation (an errno's text), and what
    /// a fault action without meaning for the operation (an ATT error for a discovery) does.
    static let kernelRefused = error(BlueZErrorName.failed, BlueZErrorMessage.inputOutputError)

    private func beginDiscovery(_ state: inout SimState, _ reply: MethodReply, _ sender: BusName, adapter index: Int) {
        // A discovery stopped under its sessions (see `discoveryClientLeft`) starts again too.
        let wasIdle = !state.adapters[index].discovering
        state.discovery[index, default: [:]][sender] = DiscoverySession(filter: state.filters[index]?[sender])
        // bluetoothd replies first, then announces Discovering (bluez-dbus-api.md §1.6).
        reply.succeed()
        guard wasIdle else { return }
        state.adapters[index].discovering = true
        state.adapters[index].discoveryStarted = MonotonicNanos.now()
        for path in state.devices.keys where state.devices[path]?.adapterIndex == index {
            state.devices[path]?.seenThisDiscovery = false
        }
        emit(state.adapters[index].path, BlueZInterface.adapter1, set: [("Discovering", .boolean(true))])
        startScanTicker(&state)
    }

    private func stopDiscoveryCall(_ call: DBusMessage, _ reply: MethodReply, adapter index: Int) {
        guard let sender = call.sender else { return reply.fail(Self.error(BlueZErrorName.failed, "no sender")) }
        core.state.withLock { state in
            guard isCurrent(state), state.adapters.indices.contains(index) else { return }
            guard state.adapters[index].powered else {
                return reply.fail(Self.error(BlueZErrorName.notReady, BlueZErrorMessage.notReady))
            }
            guard state.discovery[index]?[sender] != nil else {
                return reply.fail(Self.error(BlueZErrorName.failed, BlueZErrorMessage.noDiscoveryStarted))
            }
            state.discovery[index]?[sender] = nil
            let last = state.discovery[index]?.isEmpty ?? true
            if last && !state.adapters[index].discovering {
                // The idle branch of `discovery_stop` (the kernel's discovery was stopped
                // under this session): the cleanup and Discovering=false, flushed by the reply.
                cleanUpDiscovery(&state, adapter: index)
                emit(state.adapters[index].path, BlueZInterface.adapter1, set: [("Discovering", .boolean(false))])
                return reply.succeed()
            }
            reply.succeed()
            if last { stopDiscovery(&state, adapter: index) }
        }
    }

    /// The last session went: RSSI/TxPower of devices seen are invalidated, non-connectable
    /// temporary devices go, `Discovering` turns false (trace §13.1), announced unless the
    /// caller announces it with other changes (`adapter_stop`).
    func stopDiscovery(_ state: inout SimState, adapter index: Int, announce: Bool = true) {
        guard state.adapters.indices.contains(index), state.adapters[index].discovering else { return }
        state.discovery[index] = nil
        cleanUpDiscovery(&state, adapter: index)
        state.adapters[index].discovering = false
        if announce {
            emit(state.adapters[index].path, BlueZInterface.adapter1, set: [("Discovering", .boolean(false))])
        }
    }

    /// `discovery_cleanup`: the devices seen lose RSSI and TxPower, non-connectable temporary
    /// devices go.
    private func cleanUpDiscovery(_ state: inout SimState, adapter index: Int) {
        for path in state.devices.keys.sorted() {
            guard var device = state.devices[path], device.adapterIndex == index, device.seenThisDiscovery else {
                continue
            }
            var gone: [String] = []
            if device.rssi != nil { gone.append("RSSI") }
            if device.txPower != nil { gone.append("TxPower") }
            device.rssi = nil
            device.txPower = nil
            device.seenThisDiscovery = false
            state.devices[path] = device
            if !gone.isEmpty { emit(path, BlueZInterface.device1, remove: gone) }
        }
        for path in state.devices.keys.sorted() {
            guard let device = state.devices[path], device.adapterIndex == index, device.temporary else { continue }
            let connectable = state.peripherals[device.address]?.definition.connectable ?? false
            let keepConnected = profile.keepsConnectedTemporaries && device.connected
            if !connectable && !keepConnected { removeDevice(&state, path) }
        }
    }

    private func setDiscoveryFilter(_ call: DBusMessage, _ reply: MethodReply, adapter index: Int) {
        guard let sender = call.sender else { return reply.fail(Self.error(BlueZErrorName.failed, "no sender")) }
        let filter = parseDiscoveryFilter(call.body.first)
        core.state.withLock { state in
            guard isCurrent(state), state.adapters.indices.contains(index) else { return }
            // bluetoothd checks power before it parses the dict (`set_discovery_filter`).
            guard state.adapters[index].powered else {
                return reply.fail(Self.error(BlueZErrorName.notReady, BlueZErrorMessage.notReady))
            }
            guard case .some(let filter) = filter else {
                return reply.fail(Self.error(BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidArguments))
            }
            state.filters[index, default: [:]][sender] = filter
            if state.discovery[index]?[sender] != nil { state.discovery[index]?[sender]?.filter = filter }
            reply.succeed()
        }
    }

    /// The filter of a `SetDiscoveryFilter` argument: `.some(nil)` for the empty dict (remove
    /// the filter), `nil` when bluetoothd would answer InvalidArguments.
    private func parseDiscoveryFilter(_ argument: DBusValue?) -> DiscoveryFilter?? {
        guard case .dictionary(_, _, let entries)? = argument else { return nil }
        var dictionary: [String: DBusValue] = [:]
        for entry in entries {
            guard case .string(let key) = entry.key else { return nil }
            dictionary[key] = entry.value
        }
        if dictionary.isEmpty { return .some(nil) }
        guard let parsed = try? DiscoveryFilter(dictionary: dictionary), (try? parsed.validate()) != nil else {
            return nil
        }
        if parsed.autoConnect != nil && !profile.disconnectedSignal { return nil }
        // Every UUID must parse (`bt_string_to_uuid`).
        if let uuids = parsed.uuids, uuids.contains(where: { BlueZUUID.canonical($0) == nil }) { return nil }
        return .some(parsed)
    }

    private func removeDeviceCall(_ call: DBusMessage, _ reply: MethodReply, adapter index: Int) {
        guard case .objectPath(let path)? = call.body.first else {
            return reply.fail(Self.error(BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidArguments))
        }
        core.state.withLock { state in
            guard isCurrent(state) else { return }
            guard let device = state.devices[path], device.adapterIndex == index else {
                return reply.fail(Self.error(BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist))
            }
            guard state.adapters[index].powered else {
                return reply.fail(Self.error(BlueZErrorName.notReady, BlueZErrorMessage.notReady))
            }
            // The device becomes temporary and loses its stored data and GATT cache. Not
            // connected: removed, then the reply. Connected: disconnected first, the reply
            // when the link is down, then removal (`remove_device`).
            state.stored.remove(device.address)
            state.storedServices[device.address] = nil
            state.bonds[device.address] = nil
            guard device.connected else {
                removeDevice(&state, path)
                return reply.succeed()
            }
            let generation = device.linkGeneration
            schedule(&state, after: options.disconnectDelay) { daemon, state in
                if state.devices[path]?.linkGeneration == generation { daemon.linkDown(&state, path, reason: .local) }
                reply.succeed()
                daemon.removeDevice(&state, path)
            }
        }
    }
}

/// Nanoseconds on the monotonic clock.
enum MonotonicNanos {
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    static func of(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
