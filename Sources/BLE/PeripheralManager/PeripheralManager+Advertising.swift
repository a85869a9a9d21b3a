import BlueZ
import DBus

extension PeripheralManager {
    /// Starts advertising, as Core Bluetooth's `startAdvertising(_:)`: exports an
    /// `LEAdvertisement1` object and registers it with `LEAdvertisingManager1`. Advertising
    /// again replaces this advertisement (unregister, then register the new data); the ones
    /// added with ``addAdvertisement(_:)`` go on beside it.
    ///
    /// - Throws: ``BLEError/Code/notSupported`` when the adapter has no advertising manager or
    ///   does not list an include, the secondary channel or (`TxPower`) `CanSetTxPower`;
    ///   ``BLEError/Code/invalidArguments`` for data bluetoothd would refuse to parse, or that
    ///   cannot fit the adapter's advertisement (31 bytes for legacy advertising; the parts are
    ///   named); ``BLEError/Code/notPermitted`` when every advertising instance is taken.
    public func startAdvertising(_ data: Advertisement) async throws(BLEError) {
        try await checkAdvertisement(data)
        await enterGate()
        defer { leaveGate() }
        if advertisements[Self.mainAdvertisement] != nil { try await unregisterAdvertisement(Self.mainAdvertisement) }
        try await publishAdvertisement(data, id: Self.mainAdvertisement)
    }

    /// Stops advertising (`UnregisterAdvertisement`); nothing happens when not advertising.
    /// The advertisements added with ``addAdvertisement(_:)`` go on.
    public func stopAdvertising() async throws(BLEError) {
        await enterGate()
        defer { leaveGate() }
        guard advertisements[Self.mainAdvertisement] != nil else { return }
        try await unregisterAdvertisement(Self.mainAdvertisement)
    }

    /// Whether the advertisement of ``startAdvertising(_:)`` is registered.
    public var isAdvertising: Bool { advertisements[Self.mainAdvertisement] != nil }

    /// Starts one more advertisement beside the others, with a lifetime of its own (its
    /// `Timeout`, or ``removeAdvertisement(_:)``): as many at once as the adapter has
    /// instances (`LEAdvertisingManager1.SupportedInstances`), the one of
    /// ``startAdvertising(_:)`` included. When bluetoothd ends it, the manager sends
    /// ``PeripheralManagerEvent/advertisementStopped(_:)``.
    ///
    /// - Throws: as ``startAdvertising(_:)``; ``BLEError/Code/notPermitted`` when every
    ///   instance is taken.
    public func addAdvertisement(_ data: Advertisement) async throws(BLEError) -> AdvertisementHandle {
        try await checkAdvertisement(data)
        await enterGate()
        defer { leaveGate() }
        let id = nextAdvertisement
        nextAdvertisement += 1
        try await publishAdvertisement(data, id: id)
        return AdvertisementHandle(id: id)
    }

    /// Stops an advertisement of ``addAdvertisement(_:)``; nothing happens when it has ended.
    public func removeAdvertisement(_ handle: AdvertisementHandle) async throws(BLEError) {
        await enterGate()
        defer { leaveGate() }
        guard handle.id != Self.mainAdvertisement, advertisements[handle.id] != nil else { return }
        try await unregisterAdvertisement(handle.id)
    }

    /// The advertisements of ``addAdvertisement(_:)`` running now, oldest first.
    public var addedAdvertisements: [AdvertisementHandle] {
        advertisements.keys.filter { $0 != Self.mainAdvertisement }.sorted().map { AdvertisementHandle(id: $0) }
    }

    /// What is refused before the gate: data bluetoothd would refuse, what the adapter cannot do.
    private func checkAdvertisement(_ data: Advertisement) async throws(BLEError) {
        try AdvertisementCheck.validate(data)
        guard session.daemonStatus.present else { throw session.unavailable }
        let manager = try session.read { tree throws(BLEError) -> LEAdvertisingManagerProperties? in
            do throws(DBusError) { return try tree.advertisingManager(at: adapterPath) } catch { throw BLEError(error) }
        }
        guard let manager else {
            throw BLEError(.notSupported, message: "\(adapterName) has no LE advertising manager")
        }
        try AdvertisementCheck.supported(data, by: manager)
        try AdvertisementLength.check(data, manager: manager)
        if let response = data.scanResponse { try scanResponseSupport.check(response) }
    }

    /// What the daemon makes of scan-response data, from its adapter object (see ``ScanResponseSupport``).
    private var scanResponseSupport: ScanResponseSupport {
        session.read { tree in
            ScanResponseSupport(
                knowsProperties: tree.properties(at: adapterPath, interface: BlueZInterface.adapter1)?[
                    AdapterProperties.Key.connectable] != nil,
                experimental: tree.contains(adapterPath, implementing: BlueZInterface.advertisementMonitorManager1))
        }
    }

    /// Exports and registers advertisement `id`; on failure nothing of it is left.
    private func publishAdvertisement(_ data: Advertisement, id: Int) async throws(BLEError) {
        do throws(BLEError) {
            try registerAdvertisementObject(data, id: id)
            try await registerAdvertisement(data, id: id)
        } catch {
            advertisements[id] = nil
            session.connection.unexport(Self.advertisementPath(id))
            throw error
        }
    }

    func registerAdvertisement(_ data: Advertisement, id: Int) async throws(BLEError) {
        releasedWhileRegistering[id] = false
        defer { releasedWhileRegistering[id] = nil }
        do throws(BLEError) {
            _ = try await session.call(
                adapterPath, BlueZInterface.leAdvertisingManager1, BlueZMethod.registerAdvertisement,
                [.objectPath(Self.advertisementPath(id)), .dictionary(key: .string, value: .variant, [])],
                timeout: options.callTimeout)
            advertisements[id] = data
            // Registered and already expired: the release is reported now, in its order.
            if releasedWhileRegistering[id] == true { advertisementReleased(id) }
        } catch  where error.dbusErrorName == BlueZErrorName.failed {
            // "Failed to parse advertisement." and kernel refusals (e.g. too long for 31 bytes).
            throw BLEError(.invalidArguments, message: error.message, dbusErrorName: error.dbusErrorName)
        }
    }

    private func unregisterAdvertisement(_ id: Int) async throws(BLEError) {
        defer {
            advertisements[id] = nil
            session.connection.unexport(Self.advertisementPath(id))
        }
        do throws(BLEError) {
            _ = try await session.call(
                adapterPath, BlueZInterface.leAdvertisingManager1, BlueZMethod.unregisterAdvertisement,
                [.objectPath(Self.advertisementPath(id))], timeout: options.callTimeout)
        } catch  where error.code == .notFound {
            // Released or forgotten by bluetoothd already.
        }
    }

    /// Unregisters every advertisement (closing the manager).
    func unregisterAllAdvertisements() async {
        for id in advertisements.keys.sorted() { try? await unregisterAdvertisement(id) }
    }

    private func registerAdvertisementObject(_ data: Advertisement, id: Int) throws(BLEError) {
        let properties = data.properties.dbusProperties.sorted { $0.key < $1.key }.map {
            ExportedProperty($0.key, value: $0.value)
        }
        let release = ExportedMethod.immediate(BlueZMethod.release) { [weak self] _ in
            // No reply is expected; the state changes on the actor.
            if let self { Task { await self.advertisementReleased(id) } }
            return []
        }
        do throws(DBusError) {
            try session.connection.export(
                [
                    ExportedInterface(
                        BlueZInterface.leAdvertisement1, methods: [release], properties: properties,
                        acceptedSender: BlueZService.busName)
                ],
                at: Self.advertisementPath(id))
        } catch {
            throw BLEError(error)
        }
    }

    /// `Release()`: bluetoothd dropped advertisement `id` (its `Timeout` expired).
    func advertisementReleased(_ id: Int) {
        guard advertisements[id] != nil else {
            if releasedWhileRegistering[id] != nil { releasedWhileRegistering[id] = true }
            return
        }
        advertisements[id] = nil
        session.connection.unexport(Self.advertisementPath(id))
        eventBroadcast.yield(
            id == Self.mainAdvertisement ? .advertisingStopped : .advertisementStopped(AdvertisementHandle(id: id)))
    }

    /// The object path of advertisement `id` (0: the one of ``startAdvertising(_:)``).
    static func advertisementPath(_ id: Int) -> ObjectPath {
        (try? ObjectPath("/org/swift_ble/advertisement\(id)")) ?? .root
    }
}

/// Checks of advertisement data against bluetoothd's parser and the adapter's capabilities.
enum AdvertisementCheck {
    /// What `parse_advertisement` refuses (bluez-dbus-api.md §6.1–§6.2).
    static func validate(_ data: Advertisement) throws(BLEError) {
        func refuse(_ message: String) -> BLEError { BLEError(.invalidArguments, message: message) }
        let uuids = data.serviceUUIDs + data.solicitUUIDs + Array(data.serviceData.keys)
        guard uuids.allSatisfy(\.isValid) else { throw refuse("an advertised UUID is not a UUID") }
        guard data.manufacturerData.values.allSatisfy({ !$0.isEmpty }) else {
            throw refuse("manufacturer data must not be empty")
        }
        if let response = data.scanResponse {
            let uuids = response.serviceUUIDs + response.solicitUUIDs + Array(response.serviceData.keys)
            guard uuids.allSatisfy(\.isValid) else { throw refuse("a scan-response UUID is not a UUID") }
            guard response.manufacturerData.values.allSatisfy({ !$0.isEmpty }) else {
                throw refuse("scan-response manufacturer data must not be empty")
            }
            if let type = response.data.keys.sorted().first(where: ReservedADTypes.all.contains) {
                throw refuse(
                    "AD type 0x\(String(type, radix: 16)) is built by bluetoothd: use the scan response's typed fields")
            }
        }
        if data.kind == .broadcast && data.isDiscoverable == true {
            throw refuse("a broadcast advertisement cannot be discoverable")
        }
        if let discoverable = data.discoverableTimeout, let timeout = data.timeout, timeout > 0, discoverable > timeout
        {
            throw refuse("the discoverable timeout exceeds the timeout")
        }
        if let txPower = data.txPower, !(-127...20).contains(txPower) {
            throw refuse("TX power is outside -127…20 dBm")
        }
        let intervals = [data.properties.minInterval, data.properties.maxInterval].compactMap { $0 }
        // Milliseconds become 0.625 ms units that must lie in 0x20…0xFFFFFF.
        guard intervals.allSatisfy({ (0x20...0xFF_FFFF).contains(UInt64($0) * 8 / 5) }) else {
            throw refuse("an advertising interval is outside 20 ms … 10 485 s")
        }
        if let minimum = data.minInterval, let maximum = data.maxInterval, minimum > maximum {
            throw refuse("the minimum interval exceeds the maximum")
        }
    }

    /// What the adapter says it cannot do, as ``BLEError/Code/notSupported``.
    static func supported(_ data: Advertisement, by manager: LEAdvertisingManagerProperties) throws(BLEError) {
        for include in data.includes where !manager.supportedIncludes.contains(include.rawValue) {
            throw BLEError(.notSupported, message: "the adapter cannot include \(include.rawValue)")
        }
        if let channel = data.secondaryChannel, !(manager.supportedSecondaryChannels ?? []).contains(channel.rawValue) {
            throw BLEError(.notSupported, message: "the adapter has no \(channel.rawValue) secondary channel")
        }
        if data.txPower != nil, !(manager.supportedFeatures ?? []).contains("CanSetTxPower") {
            throw BLEError(.notSupported, message: "the adapter cannot set the TX power (no CanSetTxPower)")
        }
    }
}
