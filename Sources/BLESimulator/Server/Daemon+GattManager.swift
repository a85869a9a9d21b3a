import BlueZ
import DBus
import Foundation

extension Daemon {
    static let alreadyExists = error(BlueZErrorName.alreadyExists, BlueZErrorMessage.alreadyExists)
    static let doesNotExist = error(BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist)

    /// The caller and object of a call whose first argument is the object (`Unregister…`,
    /// `RegisterMonitor`) on adapter `index`, or nil when it is not.
    static func objectKey(_ call: DBusMessage, adapter index: Int) -> RegistrationKey? {
        guard let sender = call.sender, case .objectPath(let path)? = call.body.first else { return nil }
        return RegistrationKey(adapter: index, owner: sender, path: path)
    }

    /// The caller and object of a `Register…(o, a{sv})` call on adapter `index`, or nil when
    /// the arguments are not that.
    static func registrationKey(_ call: DBusMessage, adapter index: Int) -> RegistrationKey? {
        guard let sender = call.sender, call.body.count == 2, case .objectPath(let path) = call.body[0],
            case .dictionary(.string, .variant, _) = call.body[1]
        else { return nil }
        return RegistrationKey(adapter: index, owner: sender, path: path)
    }

    // MARK: RegisterApplication

    /// `GattManager1.RegisterApplication(o, a{sv})`: refuses duplicates at once, then reads
    /// the application's objects with `GetManagedObjects` and answers only after that
    /// (bluez-dbus-api.md §5.1), so the caller must keep dispatching while it waits.
    func registerApplication(_ call: DBusMessage, _ reply: MethodReply, adapter index: Int) {
        guard let key = Self.registrationKey(call, adapter: index) else { return reply.fail(Self.invalidArguments) }
        // The fault is the next call's, taken as it arrives (see answerRegistrationAfterFault).
        var fault: SimulatedFault.Action?
        let accepted = core.state.withLock { state -> Bool in
            guard isCurrent(state) else { return false }
            state.server.adopt(generation: generation)
            guard state.server.applications[key] == nil, !state.server.pendingApplications.contains(key) else {
                reply.fail(Self.alreadyExists)
                return false
            }
            state.server.pendingApplications.insert(key)
            fault = state.takeFault(.registerApplication, address: key.owner.rawValue)
            return true
        }
        guard accepted else { return }
        addTask(Task { [weak self, fault] in await self?.completeApplication(key, reply, fault: fault) })
    }

    /// A handle bluetoothd writes back into the application with `Properties.Set`.
    private struct HandleWriteBack: Sendable {
        var path: ObjectPath
        var interface: InterfaceName
        var handle: UInt16
    }

    private func completeApplication(_ key: RegistrationKey, _ reply: MethodReply, fault: SimulatedFault.Action?) async
    {
        // Subscribe before reading, so a Value change or InterfacesRemoved sent right after the
        // objects were read is not lost.
        let signals = try? await connection.signals(matching: MatchRule(sender: key.owner, pathNamespace: key.path))
        let objects = await managedObjects(key)
        let parsed: Result<ApplicationParser.Parsed, ApplicationRejection>
        do throws(ApplicationRejection) {
            parsed = .success(try ApplicationParser.parse(objects))
        } catch {
            parsed = .failure(error)
        }
        let writeBacks = core.state.withLock { state -> [HandleWriteBack]? in
            guard isCurrent(state), state.server.pendingApplications.remove(key) != nil else {
                reply.fail(Self.error(BlueZErrorName.failed, BlueZErrorMessage.failedToRegisterApplication))
                return nil
            }
            switch parsed {
            case .failure(let rejection):
                reply.fail(rejection.reply)
                return nil
            case .success(let application):
                switch store(&state, key, application, signals: signals) {
                case .failure(let rejection):
                    reply.fail(rejection.reply)
                    return nil
                case .success(let writeBacks):
                    return writeBacks
                }
            }
        }
        guard let writeBacks else {
            signals?.cancel()
            return
        }
        await write(writeBacks, to: key.owner)
        guard
            await answerRegistrationAfterFault(
                fault, key, reply,
                refusal: Self.error(BlueZErrorName.failed, BlueZErrorMessage.failedToRegisterApplication),
                drop: dropApplication)
        else { return }
        reply.succeed()
    }

    private func dropApplication(_ key: RegistrationKey) {
        core.state.withLock { state in state.server.applications.removeValue(forKey: key)?.tearDown() }
    }

    /// The application's objects, or none when the call fails or the reply has another type
    /// (bluetoothd then answers "No object received").
    private func managedObjects(_ key: RegistrationKey) async -> ApplicationParser.Objects {
        do {
            let reply = try await connection.call(
                destination: key.owner, path: key.path, interface: .objectManager,
                member: BlueZMethod.getManagedObjects)
            guard let body = reply.body.first else { return [:] }
            return try ObjectManagerCoding.decodeManagedObjects(body)
        } catch {
            return [:]
        }
    }

    /// Places the services in the adapter's database and keeps the registration; returns the
    /// handles to write back into objects that export `Handle` with another value.
    private func store(
        _ state: inout SimState, _ key: RegistrationKey, _ parsed: ApplicationParser.Parsed,
        signals: SignalSubscription?
    ) -> Result<[HandleWriteBack], ApplicationRejection> {
        let used = state.server.applications.filter { $0.key.adapter == key.adapter }.values
            .flatMap { $0.application.services.map { $0.handle...$0.endHandle } }
        var allocator = HandleAllocator(used: used)
        var services = parsed.services
        do throws(ApplicationRejection) {
            try allocator.place(&services)
        } catch {
            return .failure(error)
        }
        var writeBacks: [HandleWriteBack] = []
        let requested = Self.handles(parsed.services)
        for (path, handle) in Self.handles(services).sorted(by: { $0.key < $1.key })
        where requested[path] != handle {
            guard let interface = parsed.exportedHandles[path] else { continue }
            writeBacks.append(HandleWriteBack(path: path, interface: interface, handle: handle))
        }
        var watcher: Task<Void, Never>?
        if let signals {
            let task = Task { [weak self] in
                for await message in signals { self?.applicationSignal(message, key) }
            }
            addTask(task)
            watcher = task
        }
        let application = RegisteredApplication(
            adapter: key.adapter, owner: key.owner, path: key.path, services: services, profiles: parsed.profiles)
        state.server.applications[key] = ApplicationRecord(
            application: application, order: state.server.takeOrder(), watcher: watcher)
        refreshBridge(&state, adapter: key.adapter)
        return .success(writeBacks)
    }

    /// Every object's handle by path.
    private static func handles(_ services: [RegisteredService]) -> [ObjectPath: UInt16] {
        var out: [ObjectPath: UInt16] = [:]
        for service in services {
            out[service.path] = service.handle
            for characteristic in service.characteristics {
                out[characteristic.path] = characteristic.handle
                for descriptor in characteristic.descriptors { out[descriptor.path] = descriptor.handle }
            }
        }
        return out
    }

    /// `Properties.Set(interface, "Handle", <q>)` on each object; failures are ignored, as
    /// bluetoothd ignores them. Awaited so the application holds its handles by the time
    /// `RegisterApplication` returns.
    private func write(_ writeBacks: [HandleWriteBack], to owner: BusName) async {
        let timeout = options.serverRequestTimeout
        await withTaskGroup(of: Void.self) { group in
            for writeBack in writeBacks {
                group.addTask { [connection] in
                    _ = try? await connection.call(
                        destination: owner, path: writeBack.path, interface: .properties, member: BlueZMethod.set,
                        arguments: [
                            .string(writeBack.interface.rawValue), .string("Handle"),
                            .variant(.uint16(writeBack.handle)),
                        ], timeout: timeout)
                }
            }
        }
    }

    // MARK: UnregisterApplication

    /// `GattManager1.UnregisterApplication(o)`: `DoesNotExist` unless this sender registered
    /// that path on this adapter.
    func unregisterApplication(_ call: DBusMessage, _ reply: MethodReply, adapter index: Int) {
        guard let key = Self.objectKey(call, adapter: index) else { return reply.fail(Self.invalidArguments) }
        core.state.withLock { state in
            guard isCurrent(state) else { return }
            state.server.adopt(generation: generation)
            if let record = state.server.applications.removeValue(forKey: key) {
                record.tearDown()
                refreshBridge(&state, adapter: index)
                return reply.succeed()
            }
            guard state.server.pendingApplications.remove(key) != nil else { return reply.fail(Self.doesNotExist) }
            reply.succeed()
        }
    }
}
