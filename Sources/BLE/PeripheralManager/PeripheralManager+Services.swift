import BlueZ
import DBus

extension PeripheralManager {
    /// Publishes a service, as Core Bluetooth's `add(_:)`.
    ///
    /// The objects are exported under an object manager first, then registered with
    /// `GattManager1.RegisterApplication`. bluetoothd ignores objects added after a
    /// registration, so adding to a published application unregisters and registers it again
    /// with every service. On failure, timeout or cancellation the new service is taken back
    /// and the earlier ones are registered again.
    ///
    /// `timeout` (default ``PeripheralManagerOptions/callTimeout``) counts from the call, also
    /// while the call waits for another publication to finish, and covers every call to
    /// bluetoothd the addition makes.
    ///
    /// - Throws: ``BLEError/Code/invalidArguments`` for a service bluetoothd would refuse (see
    ///   ``MutableCharacteristic``); ``BLEError/Code/timeout`` past the deadline; what bluetoothd
    ///   answers otherwise.
    @discardableResult
    public func add(_ service: MutableService, timeout: Duration? = nil) async throws(BLEError) -> ServiceHandle {
        try ServiceValidation.validate(service)
        let deadline = PublicationDeadline(timeout ?? options.callTimeout, for: "publishing the service")
        await enterGate()
        defer { leaveGate() }
        let handle = ServiceHandle(id: nextServiceID, uuid: service.uuid)
        nextServiceID += 1
        let published = PublishedService(
            handle: handle, service: service,
            path: PublishedService.child(Self.applicationPath, "service", handle.id))
        let includes = try includedPaths(service, among: services + [published])
        do throws(BLEError) {
            if applicationRegistered { try await unregisterApplication(timeout: try deadline.remaining()) }
            try export(published, includes: includes)
            services.append(published)
            try await registerApplication(timeout: try deadline.remaining())
        } catch {
            services.removeAll { $0.handle == handle }
            unexport(published)
            await rollBack()
            throw error
        }
        return handle
    }

    /// Unpublishes one service. bluetoothd drops a service whose object goes away
    /// (`InterfacesRemoved`); when it was the last one the application is unregistered, within
    /// `timeout` (default ``PeripheralManagerOptions/callTimeout``) counted from the call.
    public func remove(_ handle: ServiceHandle, timeout: Duration? = nil) async throws(BLEError) {
        let deadline = PublicationDeadline(timeout ?? options.callTimeout, for: "removing the service")
        await enterGate()
        defer { leaveGate() }
        guard let index = services.firstIndex(where: { $0.handle == handle }) else {
            throw BLEError(.notFound, message: "service \(handle) is not published")
        }
        let published = services.remove(at: index)
        if services.isEmpty, applicationRegistered {
            defer { unexport(published) }
            try await unregisterApplication(timeout: try deadline.remaining())
        } else {
            unexport(published)
        }
    }

    /// Unpublishes every service (`UnregisterApplication`), as Core Bluetooth's
    /// `removeAllServices()`, within `timeout` (default ``PeripheralManagerOptions/callTimeout``)
    /// counted from the call. The services are unpublished whatever bluetoothd answers.
    public func removeAllServices(timeout: Duration? = nil) async throws(BLEError) {
        let deadline = PublicationDeadline(timeout ?? options.callTimeout, for: "removing the services")
        await enterGate()
        defer { leaveGate() }
        let removed = services
        services.removeAll()
        defer { for published in removed { unexport(published) } }
        if applicationRegistered { try await unregisterApplication(timeout: try deadline.remaining()) }
    }

    /// The services published now.
    public var publishedServices: [ServiceHandle] { services.map(\.handle) }

    // MARK: Registration

    /// After a failed, timed-out or cancelled registration: bluetoothd may have completed it
    /// anyway, so unregister, then register what is still published. Runs even when the
    /// caller was cancelled, so the state left behind is known.
    private func rollBack() async {
        let task = Task(executorPreference: session.connection.executor) {
            try? await self.unregisterApplication()
            if await !self.services.isEmpty { try? await self.registerApplication() }
        }
        await task.value
    }

    func registerApplication(timeout: Duration? = nil) async throws(BLEError) {
        let timeout = timeout ?? options.callTimeout
        let start = ContinuousClock.now
        let arguments: [DBusValue] = [
            .objectPath(Self.applicationPath), .dictionary(key: .string, value: .variant, []),
        ]
        do throws(BLEError) {
            _ = try await session.call(
                adapterPath, BlueZInterface.gattManager1, BlueZMethod.registerApplication, arguments,
                timeout: timeout)
        } catch  where error.code == .alreadyExists {
            // An earlier registration whose answer was lost (cancelled, timed out): replace it.
            let deadline = PublicationDeadline(timeout - (ContinuousClock.now - start), for: "publishing")
            try await unregisterApplication(timeout: try deadline.remaining())
            _ = try await session.call(
                adapterPath, BlueZInterface.gattManager1, BlueZMethod.registerApplication, arguments,
                timeout: try deadline.remaining())
        }
        applicationRegistered = true
    }

    func unregisterApplication(timeout: Duration? = nil) async throws(BLEError) {
        applicationRegistered = false
        do throws(BLEError) {
            _ = try await session.call(
                adapterPath, BlueZInterface.gattManager1, BlueZMethod.unregisterApplication,
                [.objectPath(Self.applicationPath)], timeout: timeout ?? options.callTimeout)
        } catch  where error.code == .notFound {
            // bluetoothd no longer had it (it restarted, or dropped it): the goal is reached.
        }
    }

    /// After a bluetoothd restart: registers the services and the advertisements again.
    func republish() async {
        guard !services.isEmpty || !advertisements.isEmpty else { return }
        await enterGate()
        defer { leaveGate() }
        do throws(BLEError) {
            if !services.isEmpty, !applicationRegistered { try await registerApplication() }
            for (id, data) in advertisements.sorted(by: { $0.key < $1.key }) {
                try await registerAdvertisement(data, id: id)
            }
            eventBroadcast.yield(.republished)
        } catch {
            eventBroadcast.yield(.republishFailed(error))
        }
    }

    // MARK: Objects

    private func includedPaths(_ service: MutableService, among all: [PublishedService]) throws(BLEError)
        -> [ObjectPath]
    {
        var paths: [ObjectPath] = []
        for uuid in service.includedServices {
            guard let included = all.first(where: { $0.service.uuid == uuid && $0.service != service }) else {
                throw BLEError(.invalidArguments, message: "included service \(uuid) is not published")
            }
            paths.append(included.path)
        }
        return paths
    }

    private func export(_ published: PublishedService, includes: [ObjectPath]) throws(BLEError) {
        let builder = GattObjects(core: core, acquireNotify: options.acquireNotify)
        do throws(DBusError) {
            let objects = try builder.objects(for: published, includes: includes)
            core.state.withLock { state in
                for (path, _, attribute) in objects { if let attribute { state.attributes[path] = attribute } }
                for (index, characteristic) in published.service.characteristics.enumerated()
                where characteristic.notifies {
                    state.notify[published.characteristicPath(index)] = GattServerCore.NotifyState(
                        uuid: characteristic.uuid)
                }
            }
            for (path, interfaces, _) in objects { try session.connection.export(interfaces, at: path) }
        } catch {
            unexport(published)
            throw BLEError(error)
        }
    }

    /// Removes the service object first: that `InterfacesRemoved` is what bluetoothd acts on.
    func unexport(_ published: PublishedService) {
        let connection = session.connection
        connection.unexport(published.path)
        var paths: [ObjectPath] = []
        for (index, characteristic) in published.service.characteristics.enumerated() {
            paths.append(published.characteristicPath(index))
            for position in characteristic.descriptors.indices {
                paths.append(published.descriptorPath(index, position))
            }
        }
        for path in paths { connection.unexport(path) }
        core.dropSubscriptions(at: paths)
        core.state.withLock { state in
            for path in paths {
                state.attributes[path] = nil
                state.notify[path] = nil
            }
        }
    }
}
