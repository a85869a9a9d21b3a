import BlueZ
import DBus

extension Central {
    /// Connects to a peripheral and waits until its services are resolved and its GATT
    /// objects exist.
    ///
    /// Concurrent calls for one peripheral share one attempt. On timeout or cancellation the
    /// SDK sends `Device1.Disconnect` (BlueZ's way to cancel a pending Connect) so no
    /// half-open link remains. A peripheral BlueZ knows but that is not advertising right now
    /// is connected to directly; one BlueZ has never seen is looked for with a short targeted
    /// scan first.
    public func connect(_ id: PeripheralID, timeout: Duration? = nil) async throws(BLEError) -> Peripheral {
        if connectAttempts[id] == nil {
            // A peripheral the mirror holds: its own lifecycle shares the attempt among callers,
            // each leaving on its own, and this task waits for it with no task in between.
            let address = try checkConnectable(id)
            if let path = mirroredDevicePath(id, address) {
                let peripheral = peripheral(for: id, path: path)
                try await peripheral.connectLink(timeout: timeout ?? options.connectTimeout)
                return peripheral
            }
        }
        let attempt: SharedAttempt<Peripheral>
        if let existing = connectAttempts[id] {
            attempt = existing
        } else {
            let deadline = timeout ?? options.connectTimeout
            attempt = SharedAttempt(
                Task(executorPreference: session.connection.executor) {
                    do throws(BLEError) {
                        return .success(try await self.performConnect(id, timeout: deadline))
                    } catch {
                        return .failure(error)
                    }
                })
            connectAttempts[id] = attempt
        }
        // Cancelling one caller ends its wait at once; the attempt itself (then Disconnect)
        // only when no caller is left.
        let result = await attempt.join(diagnostics: session.diagnostics, executor: session.connection.executor)
        if connectAttempts[id] === attempt, !Task.isCancelled || !attempt.isWaitedFor { connectAttempts[id] = nil }
        return try result.get()
    }

    /// The path of the device `id` names while the mirror holds it: the one its peripheral
    /// follows already (a reconnection builds and matches no path), else found by address.
    func mirroredDevicePath(_ id: PeripheralID, _ address: BluetoothAddress) -> ObjectPath? {
        let adapterPath = self.adapterPath
        let known = peripherals[id]?.devicePath
        return session.read { tree in
            if let known, tree.contains(known, implementing: BlueZInterface.device1) { return known }
            return tree.devicePath(address: address, adapter: adapterPath)
        }
    }

    /// Whether `id` can be connected through this central now; its address when it can.
    private func checkConnectable(_ id: PeripheralID) throws(BLEError) -> BluetoothAddress {
        try checkOnThisAdapter(id)
        guard state == .poweredOn else {
            throw BLEError(
                state == .poweredOff ? .poweredOff : .bluetoothUnavailable, message: "cannot connect: \(state)")
        }
        return id.bluetoothAddress
    }

    private func performConnect(_ id: PeripheralID, timeout: Duration) async throws(BLEError) -> Peripheral {
        let address = try checkConnectable(id)
        let start = ContinuousClock.now
        var path = session.tree.devicePath(address: address, adapter: adapterPath)
        // A scan that finds the peripheral runs until the Connect is done: stopping discovery
        // first would let bluetoothd drop the device it just created (a non-connectable one at
        // once, others when they expire).
        var targetedScan: ScanHandle?
        defer { withExtendedLifetime(targetedScan) {} }
        if path == nil { (path, targetedScan) = try await findDevice(address, timeout: timeout) }
        guard let path else { throw BLEError(.notFound, message: "the peripheral was not found") }
        let peripheral = peripheral(for: id, path: path)
        let remaining = timeout - (ContinuousClock.now - start)
        guard remaining > .zero else { throw BLEError.timeout("connecting") }
        try await peripheral.connectLink(timeout: remaining)
        return peripheral
    }

    /// The one `Peripheral` object per identifier; a new one is named as bluetoothd reports
    /// the device now (see ``identifier(_:at:)``).
    func peripheral(for id: PeripheralID, path: ObjectPath) -> Peripheral {
        if let existing = peripherals[id] { return existing }
        let id = identifier(id, at: path)
        let created = Peripheral(
            id: id, devicePath: path, session: session, central: self, policy: options.reconnectPolicy,
            options: options)
        peripherals[id] = created
        return created
    }

    /// Looks for `address` with a scan of its own until bluetoothd creates the device object
    /// (nil: not within `timeout`). The scan runs until the returned handle goes: the caller
    /// keeps it until its Connect is answered.
    func findDevice(_ address: BluetoothAddress, timeout: Duration) async throws(BLEError) -> (
        path: ObjectPath?, scan: ScanHandle
    ) {
        let scan = ScanSequence(
            central: self, request: ScanRequest(services: [], options: ScanOptions(bufferSize: 1), isApps: false)
        ).makeAsyncIterator()
        return (try await waitForDevice(address, timeout: timeout), scan.handle)
    }

    /// Waits (while a scan runs) until BlueZ creates the device object.
    private func waitForDevice(_ address: BluetoothAddress, timeout: Duration) async throws(BLEError) -> ObjectPath? {
        let adapterPath = self.adapterPath
        let session = self.session
        let events = session.events(under: adapterPath)
        defer { events.cancel() }
        return try await withDeadline(timeout, what: "looking for the peripheral", timedBy: session.connection) {
            () throws(BLEError) -> ObjectPath? in
            if let path = session.tree.devicePath(address: address, adapter: adapterPath) { return path }
            for await event in events {
                if case .daemonGone = event { throw session.unavailable }
                if let path = session.tree.devicePath(address: address, adapter: adapterPath) { return path }
            }
            return nil
        }
    }

    // MARK: Known and connected peripherals

    /// The peripherals BlueZ knows on this adapter (paired, previously connected, or seen
    /// recently): Core Bluetooth's `retrievePeripherals(withIdentifiers:)` for Linux.
    public func knownPeripherals() -> [PeripheralInfo] {
        let tree = session.tree
        let adapter = adapterIdentity
        return tree.devicePaths(of: adapterPath).compactMap { path in
            guard let device = try? tree.device(at: path) else { return nil }
            return PeripheralInfo(adapter: adapter, device: device)
        }
    }

    /// The peripherals connected now (by any process) that offer one of `services` (all when
    /// empty): Core Bluetooth's `retrieveConnectedPeripherals(withServices:)`. The returned
    /// objects reattach without reconnecting; the SDK does not disconnect links it did not open.
    /// A link counts once BlueZ has resolved its services, as ``connect(_:timeout:)`` waits
    /// for: before that its GATT objects are missing and every lookup would fail.
    public func connectedPeripherals(withServices services: [BluetoothUUID] = []) -> [Peripheral] {
        let tree = session.tree
        let adapter = adapterIdentity
        return tree.devicePaths(of: adapterPath).compactMap { path in
            guard let device = try? tree.device(at: path), device.connected, device.servicesResolved else {
                return nil
            }
            let offered = Set(device.uuids.map { BluetoothUUID($0) })
            guard services.isEmpty || !offered.isDisjoint(with: services) else { return nil }
            let id = PeripheralID(adapter: adapter, address: device.address, type: device.addressType)
            let peripheral = peripheral(for: id, path: path)
            // At once, not in a task: a caller's next step (a disconnect) must find the link
            // taken up. The peripheral runs on this central's executor, the thread this runs on.
            peripheral.assumeIsolated { $0.reattach() }
            return peripheral
        }
    }
}

/// What BlueZ knows about a peripheral without connecting.
public struct PeripheralInfo: Sendable, Hashable {
    /// Who it is.
    public var id: PeripheralID
    /// Its name, if known.
    public var name: String?
    /// Whether it is paired.
    public var isPaired: Bool
    /// Whether BlueZ trusts it (`Device1.Trusted`: its requests need no authorization).
    public var isTrusted: Bool
    /// Whether it is connected now.
    public var isConnected: Bool
    /// The services it advertised or BlueZ resolved.
    public var services: [BluetoothUUID]
    /// Last RSSI, when seen in the current discovery.
    public var rssi: Int16?

    init(adapter: AdapterIdentity, device: DeviceProperties) {
        id = PeripheralID(adapter: adapter, address: device.address, type: device.addressType)
        name = device.name
        isPaired = device.paired
        isTrusted = device.trusted
        isConnected = device.connected
        services = device.uuids.map { BluetoothUUID($0) }
        rssi = device.rssi
    }
}

extension Peripheral {
    /// Takes up a link opened by someone else, without owning it.
    func reattach() {
        follow()
        runLink(lifecycle.reattached(mirroredDevice()))
    }
}
