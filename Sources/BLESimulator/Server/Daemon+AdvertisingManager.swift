import BlueZ
import DBus
import Foundation

extension Daemon {
    // MARK: RegisterAdvertisement

    /// `LEAdvertisingManager1.RegisterAdvertisement(o, a{sv})`: refuses duplicates and a sixth
    /// advertisement at once, then reads the object with `Properties.GetAll` and answers after
    /// parsing it (bluez-dbus-api.md §6.1).
    func registerAdvertisement(_ call: DBusMessage, _ reply: MethodReply, adapter index: Int) {
        guard let key = Self.registrationKey(call, adapter: index) else { return reply.fail(Self.invalidArguments) }
        // The fault is the next call's, taken as it arrives (see answerRegistrationAfterFault).
        var fault: SimulatedFault.Action?
        let accepted = core.state.withLock { state -> Bool in
            guard isCurrent(state) else { return false }
            state.server.adopt(generation: generation)
            guard state.server.advertisements[key] == nil, !state.server.pendingAdvertisements.contains(key) else {
                reply.fail(Self.alreadyExists)
                return false
            }
            guard
                state.server.advertisementCount(adapter: index, includingPending: true) < ServerState.maxAdvertisements
            else {
                reply.fail(Self.error(BlueZErrorName.notPermitted, BlueZErrorMessage.maximumAdvertisementsReached))
                return false
            }
            state.server.pendingAdvertisements.insert(key)
            fault = state.takeFault(.registerAdvertisement, address: key.owner.rawValue)
            return true
        }
        guard accepted else { return }
        addTask(Task { [weak self, fault] in await self?.completeAdvertisement(key, reply, fault: fault) })
    }

    private func completeAdvertisement(_ key: RegistrationKey, _ reply: MethodReply, fault: SimulatedFault.Action?)
        async
    {
        // Subscribe before reading, so a change made right after GetAll is not lost.
        let rule = MatchRule(
            sender: key.owner, path: key.path, interface: .properties, member: BlueZSignal.propertiesChanged,
            arguments: [0: BlueZInterface.leAdvertisement1.rawValue])
        let signals = try? await connection.signals(matching: rule)
        let read = await advertisementProperties(key)
        let parsed: Result<LEAdvertisementProperties, AdvertisementParser.Failure>
        do throws(AdvertisementParser.Failure) {
            parsed = .success(
                try AdvertisementParser.parse(
                    AdvertisementParser.understood(read, profile: profile, experimental: options.experimental)))
        } catch {
            parsed = .failure(error)
        }
        let instance = core.state.withLock { state -> UInt8? in
            guard isCurrent(state), state.server.pendingAdvertisements.remove(key) != nil else {
                reply.fail(Self.error(BlueZErrorName.failed, BlueZErrorMessage.failedToCompleteRegistration))
                return nil
            }
            guard case .success(let properties) = parsed else {
                reply.fail(Self.error(BlueZErrorName.failed, BlueZErrorMessage.failedToParseAdvertisement))
                return nil
            }
            return storeAdvertisement(&state, key, properties, signals: signals)
        }
        guard let instance else {
            signals?.cancel()
            return
        }
        // A fault's delay lets a short `Timeout` expire first, as on a loaded machine.
        guard
            await answerRegistrationAfterFault(
                fault, key, reply, refusal: Self.kernelRefused, drop: dropAdvertisement)
        else { return }
        // ≥5.87 tells the application its instance when it exports the property.
        if profile.advertisingFeatures, case .success(let properties) = parsed, properties.instance != nil {
            _ = try? await connection.call(
                destination: key.owner, path: key.path, interface: .properties, member: BlueZMethod.set,
                arguments: [
                    .string(BlueZInterface.leAdvertisement1.rawValue),
                    .string(LEAdvertisementProperties.Key.instance), .variant(.byte(instance)),
                ], timeout: options.serverRequestTimeout)
        }
        reply.succeed()
    }

    private func dropAdvertisement(_ key: RegistrationKey) {
        core.state.withLock { state in
            guard let record = state.server.advertisements.removeValue(forKey: key) else { return }
            record.watcher?.cancel()
            emitAdvertisingInstances(state, adapter: key.adapter)
            refreshBridge(&state, adapter: key.adapter)
        }
    }

    /// The object's `LEAdvertisement1` properties, or none when `GetAll` fails (the parse
    /// then fails for the missing `Type`).
    private func advertisementProperties(_ key: RegistrationKey) async -> [String: DBusValue] {
        do {
            let reply = try await connection.call(
                destination: key.owner, path: key.path, interface: .properties, member: BlueZMethod.getAll,
                arguments: [.string(BlueZInterface.leAdvertisement1.rawValue)])
            guard let body = reply.body.first else { return [:] }
            return try ObjectManagerCoding.decodeProperties(body)
        } catch {
            return [:]
        }
    }

    /// Keeps a parsed advertisement: lowest free instance, live-update watcher, `Timeout`
    /// timer, and the new instance counts on the adapter.
    private func storeAdvertisement(
        _ state: inout SimState, _ key: RegistrationKey, _ properties: LEAdvertisementProperties,
        signals: SignalSubscription?
    ) -> UInt8 {
        let taken = Set(
            state.server.advertisements.filter { $0.key.adapter == key.adapter }.map(\.value.advertisement.instance))
        let instance = (1...UInt8(ServerState.maxAdvertisements)).first { !taken.contains($0) } ?? 0
        var watcher: Task<Void, Never>?
        if let signals {
            let task = Task { [weak self] in
                for await message in signals { self?.advertisementChanged(message, key) }
            }
            addTask(task)
            watcher = task
        }
        let advertisement = RegisteredAdvertisement(
            adapter: key.adapter, owner: key.owner, path: key.path, instance: instance, properties: properties)
        state.server.advertisements[key] = AdvertisementRecord(
            advertisement: advertisement, order: state.server.takeOrder(), watcher: watcher)
        armAdvertisementTimeout(&state, key)
        emitAdvertisingInstances(state, adapter: key.adapter)
        refreshBridge(&state, adapter: key.adapter)
        return instance
    }

    // MARK: Live updates and Timeout

    /// A `PropertiesChanged` of a registered advertisement: bluetoothd re-parses it and
    /// re-programs the controller; an update that does not parse is ignored.
    private func advertisementChanged(_ message: DBusMessage, _ key: RegistrationKey) {
        guard message.body.count == 3, let changed = try? ObjectManagerCoding.decodeProperties(message.body[1]),
            case .array(.string, let names) = message.body[2]
        else { return }
        let invalidated = names.compactMap { if case .string(let name) = $0 { name } else { nil } }
        core.state.withLock { state in
            guard isCurrent(state), var record = state.server.advertisements[key] else { return }
            var properties = record.advertisement.properties
            do throws(DBusError) {
                try properties.apply(
                    changed: AdvertisementParser.understood(
                        changed, profile: profile, experimental: options.experimental),
                    invalidated: invalidated)
            } catch {
                return
            }
            do throws(AdvertisementParser.Failure) {
                try AdvertisementParser.validate(properties)
            } catch {
                return
            }
            let timeoutChanged = properties.timeout != record.advertisement.properties.timeout
            record.advertisement.properties = properties
            state.server.advertisements[key] = record
            if timeoutChanged { armAdvertisementTimeout(&state, key) }
            refreshBridge(&state, adapter: key.adapter)
        }
    }

    /// (Re)starts the `Timeout` timer of an advertisement; 0 or absent means none.
    private func armAdvertisementTimeout(_ state: inout SimState, _ key: RegistrationKey) {
        guard var record = state.server.advertisements[key] else { return }
        record.timerStamp += 1
        state.server.advertisements[key] = record
        guard let seconds = record.advertisement.properties.timeout, seconds > 0 else { return }
        let stamp = record.timerStamp
        schedule(&state, after: .seconds(Int(seconds))) { daemon, state in
            guard state.server.advertisements[key]?.timerStamp == stamp else { return }
            daemon.expireAdvertisement(&state, key)
        }
    }

    /// `Timeout` expired: bluetoothd calls `Release()` (no reply expected) and drops it.
    private func expireAdvertisement(_ state: inout SimState, _ key: RegistrationKey) {
        guard let record = state.server.advertisements.removeValue(forKey: key) else { return }
        record.watcher?.cancel()
        let release = DBusMessage(
            kind: .methodCall, path: key.path, interface: BlueZInterface.leAdvertisement1, member: BlueZMethod.release,
            destination: key.owner, noReplyExpected: true)
        try? connection.send(release)
        emitAdvertisingInstances(state, adapter: key.adapter)
        refreshBridge(&state, adapter: key.adapter)
    }

    // MARK: UnregisterAdvertisement

    /// `LEAdvertisingManager1.UnregisterAdvertisement(o)`: `DoesNotExist` unless this sender
    /// registered that path on this adapter; no `Release` call.
    func unregisterAdvertisement(_ call: DBusMessage, _ reply: MethodReply, adapter index: Int) {
        guard let key = Self.objectKey(call, adapter: index) else { return reply.fail(Self.invalidArguments) }
        core.state.withLock { state in
            guard isCurrent(state) else { return }
            state.server.adopt(generation: generation)
            if let record = state.server.advertisements.removeValue(forKey: key) {
                record.watcher?.cancel()
                emitAdvertisingInstances(state, adapter: index)
                refreshBridge(&state, adapter: index)
                return reply.succeed()
            }
            guard state.server.pendingAdvertisements.remove(key) != nil else { return reply.fail(Self.doesNotExist) }
            reply.succeed()
        }
    }
}
