import BlueZ
import DBus
import Foundation

/// The peripheral role: what bluetoothd holds for applications that registered GATT services
/// and advertisements, and a simulated remote central that talks to them the way bluetoothd
/// forwards a real central's ATT requests (bluez-dbus-api.md §5, §6).
///
/// ```swift
/// let simulator = try await Simulator.start(on: .address(bus.address))
/// // the code under test registers an application on /org/bluez/hci0 …
/// let value = try await simulator.remoteRead(characteristic: "2A37")
/// try await simulator.remoteSubscribe(to: "2A37")
/// for await notification in simulator.notifications(for: "2A37") { … }
/// ```
extension Simulator {
    /// The address of the remote central when a request names none.
    public static let defaultRemoteCentral = "11:22:33:44:55:66"
    /// The ATT MTU of the remote central when a request names none: BlueZ's largest LE MTU.
    public static let defaultRemoteMTU: UInt16 = 517

    // MARK: Snapshots

    /// The GATT applications registered now, in registration order.
    public var registeredApplications: [RegisteredApplication] {
        core.state.withLock { state in
            guard state.server.generation == state.generation else { return [] }
            return state.server.orderedApplications.map(\.record.snapshot)
        }
    }

    /// The advertisements registered now, in registration order.
    public var advertisements: [RegisteredAdvertisement] {
        core.state.withLock { state in
            guard state.server.generation == state.generation else { return [] }
            return state.server.advertisements.values.sorted { $0.order < $1.order }.map(\.advertisement)
        }
    }

    // MARK: Reads and writes

    /// A remote central reads a characteristic: bluetoothd calls the application's
    /// `ReadValue` with `device`, `offset` (only when non-zero), `link` and `mtu`, and waits
    /// at most ``SimulatorOptions/serverRequestTimeout``.
    ///
    /// - Returns: the value the central receives (at most 512 bytes).
    /// - Throws: ``RemoteCentralError``, with the ATT error the central received when it got one.
    public func remoteRead(
        characteristic uuid: String, central address: String = defaultRemoteCentral, offset: UInt16 = 0,
        mtu: UInt16 = defaultRemoteMTU
    ) async throws(RemoteCentralError) -> Data {
        let daemon = try runningDaemon()
        let target = try daemon.serverTarget(characteristic: uuid)
        let request = try ServerRequestOptions(central: address, adapter: target.adapterPath, offset: offset, mtu: mtu)
        return try await daemon.forwardRead(target, request)
    }

    /// A remote central writes a characteristic: `WriteValue` with the same options as a read,
    /// plus `prepare-authorize` when `prepareAuthorize` is true. A command, or any write to a
    /// `write-without-response` characteristic, returns without waiting for the application;
    /// with `WriteAcquired` the value goes into the `AcquireWrite` socket instead.
    public func remoteWrite(
        _ value: Data, to characteristic: String, central address: String = defaultRemoteCentral,
        type: RemoteWriteType = .request, offset: UInt16 = 0, prepareAuthorize: Bool = false,
        mtu: UInt16 = defaultRemoteMTU
    ) async throws(RemoteCentralError) {
        let daemon = try runningDaemon()
        let target = try daemon.serverTarget(characteristic: characteristic)
        let request = try ServerRequestOptions(
            central: address, adapter: target.adapterPath, offset: offset, mtu: mtu, prepareAuthorize: prepareAuthorize)
        try await daemon.forwardWrite(value, target, request, type: type)
    }

    /// A remote central reads a descriptor of a characteristic (`ReadValue` on the descriptor).
    public func remoteRead(
        descriptor uuid: String, of characteristic: String, central address: String = defaultRemoteCentral,
        offset: UInt16 = 0, mtu: UInt16 = defaultRemoteMTU
    ) async throws(RemoteCentralError) -> Data {
        let daemon = try runningDaemon()
        let target = try daemon.serverTarget(characteristic: characteristic, descriptor: uuid)
        let request = try ServerRequestOptions(central: address, adapter: target.adapterPath, offset: offset, mtu: mtu)
        return try await daemon.forwardRead(target, request)
    }

    /// A remote central writes a descriptor of a characteristic (`WriteValue` on the descriptor).
    public func remoteWrite(
        _ value: Data, toDescriptor uuid: String, of characteristic: String,
        central address: String = defaultRemoteCentral, offset: UInt16 = 0, prepareAuthorize: Bool = false,
        mtu: UInt16 = defaultRemoteMTU
    ) async throws(RemoteCentralError) {
        let daemon = try runningDaemon()
        let target = try daemon.serverTarget(characteristic: characteristic, descriptor: uuid)
        let request = try ServerRequestOptions(
            central: address, adapter: target.adapterPath, offset: offset, mtu: mtu, prepareAuthorize: prepareAuthorize)
        try await daemon.forwardWrite(value, target, request, type: .request)
    }

    // MARK: Subscriptions

    /// A remote central writes the characteristic's CCC descriptor to enable notifications
    /// (`indications` false), indications (true), or whichever the flags allow, notifications
    /// first (nil). bluetoothd calls `AcquireNotify` when the application exports
    /// `NotifyAcquired` and no socket is open yet, otherwise `StartNotify` at every new enable.
    ///
    /// - Throws: ``RemoteCentralError/Code/rejected`` with ATT 0xFD when the flags do not allow it.
    public func remoteSubscribe(
        to characteristic: String, central address: String = defaultRemoteCentral, indications: Bool? = nil,
        mtu: UInt16 = defaultRemoteMTU
    ) async throws(RemoteCentralError) {
        let daemon = try runningDaemon()
        let target = try daemon.serverTarget(characteristic: characteristic)
        let request = try ServerRequestOptions(central: address, adapter: target.adapterPath, mtu: mtu)
        try await daemon.subscribe(target, central: address, indications: indications, request: request)
    }

    /// A remote central writes 0 to the CCC descriptor. When it was the last subscriber,
    /// bluetoothd closes the `AcquireNotify` socket or calls `StopNotify`.
    public func remoteUnsubscribe(
        from characteristic: String, central address: String = defaultRemoteCentral
    ) async throws(RemoteCentralError) {
        let daemon = try runningDaemon()
        let target = try daemon.serverTarget(characteristic: characteristic)
        try await daemon.unsubscribe(target, central: address)
    }

    /// The notifications and indications registered applications send from characteristics
    /// with `uuid`: one element per subscribed remote central, from `PropertiesChanged(Value)`
    /// or from an `AcquireNotify` socket. Values sent while no central is subscribed go
    /// nowhere, as with bluetoothd.
    ///
    /// Buffers up to 4,096 elements, then drops the newest. Ends when the iterating task is
    /// cancelled or the simulator is released.
    public func notifications(for uuid: String) -> AsyncStream<ServerNotification> {
        let characteristic = BlueZUUID.canonical(uuid) ?? uuid.lowercased()
        let (stream, continuation) = AsyncStream.makeStream(
            of: ServerNotification.self, bufferingPolicy: .bufferingOldest(4096))
        let id = core.state.withLock { state -> UInt64 in
            defer { state.server.nextListener += 1 }
            state.server.listeners[state.server.nextListener] = NotificationListener(
                characteristic: characteristic, continuation: continuation)
            return state.server.nextListener
        }
        continuation.onTermination = { [core] _ in
            // Taken out under the lock, released after it.
            let removed = core.state.withLock { $0.server.listeners.removeValue(forKey: id) }
            _ = removed
        }
        return stream
    }

    func runningDaemon() throws(RemoteCentralError) -> Daemon {
        guard let current = daemon.withLock({ $0 }) else { throw RemoteCentralError.notRunning }
        return current
    }
}
