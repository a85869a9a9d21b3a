import BlueZ
import DBus
import Foundation

/// The peripheral role, as Core Bluetooth's `CBPeripheralManager`: publish GATT services,
/// answer centrals' reads and writes, notify subscribers, and advertise.
///
/// ```swift
/// import BLE
/// import Foundation
///
/// let manager = try await PeripheralManager()              // system bus, default adapter
/// try await manager.waitUntilPoweredOn(timeout: .seconds(5))
/// let events = manager.events                              // subscribe before publishing
/// try await manager.add(
///     MutableService(
///         uuid: "180D",
///         characteristics: [
///             MutableCharacteristic(uuid: "2A37", properties: [.notify]),
///             MutableCharacteristic(uuid: "2A38", properties: [.read], value: Data([0x01])),  // static
///             MutableCharacteristic(uuid: "2A39", properties: [.write]),
///         ]))
/// try await manager.startAdvertising(Advertisement(localName: "HRM", serviceUUIDs: ["180D"]))
///
/// let answering = Task {
///     for await request in manager.requests {              // reads and writes of centrals
///         if request.kind == .write, request.value == Data([0x01]) {
///             request.respond()
///         } else {
///             request.respond(with: .writeNotPermitted)
///         }
///     }
/// }
/// for await event in events {
///     guard case .subscribed(characteristic: "2A37", _) = event else { continue }
///     try await manager.updateValue(Data([0x00, 72]), for: "2A37")   // waits while the channel is full
///     break
/// }
/// await manager.close()                                    // unregisters; requests end
/// await answering.value
/// ```
///
/// The manager runs on its bus connection's I/O thread (its actor executor). bluetoothd's
/// calls into the published objects are answered there too, so a slow app never blocks them:
/// requests queue in ``requests`` and time out after ``PeripheralManagerOptions/requestTimeout``.
///
/// BlueZ notes: bluetoothd forgets every registration when it restarts; the manager registers
/// its services and advertisement again when it comes back (``PeripheralManagerEvent/republished``).
/// Notifications go to every subscribed central at once (BlueZ has no per-central send).
public actor PeripheralManager {
    let session: BlueZSession
    /// The options it was created with.
    public nonisolated let options: PeripheralManagerOptions
    /// The adapter it publishes on, e.g. `hci0`.
    public nonisolated let adapterName: String
    nonisolated let adapterPath: ObjectPath
    nonisolated let stateBroadcast = Broadcast(ManagerState.unknown)
    nonisolated let eventBroadcast = EventBroadcast<PeripheralManagerEvent>()
    nonisolated let core: GattServerCore
    /// The reads and writes of remote centrals, in arrival order, for one consumer: iterate it
    /// once (ending that iteration, by `break` or cancellation, ends the stream; later requests
    /// are then refused). Holds ``PeripheralManagerOptions/requestBufferSize`` requests; ends
    /// at ``close()``.
    public nonisolated let requests: AsyncStream<PeripheralRequest>

    var services: [PublishedService] = []
    var nextServiceID = 1
    var applicationRegistered = false
    /// The registered advertisements by id: ``mainAdvertisement`` for ``startAdvertising(_:)``,
    /// the others from ``addAdvertisement(_:)``.
    var advertisements: [Int: Advertisement] = [:]
    var nextAdvertisement = 1
    /// Where the `Release()` of an advertisement not yet answered for goes: bluetoothd may
    /// expire a short `Timeout` before this actor has taken RegisterAdvertisement's reply
    /// (the two race across the bus and the actor). No entry while no registration is under way.
    var releasedWhileRegistering: [Int: Bool] = [:]
    var follower: Task<Void, Never>?
    /// What the manager leaves waiting (tasks, streams, bus calls, L2CAP sockets): zero once
    /// it is closed and its channels are closed.
    public nonisolated var diagnostics: BLEDiagnostics { session.diagnostics }
    /// Published L2CAP PSMs (see PeripheralManager+L2CAP.swift).
    var l2capPublications: [UInt16: L2CAPPublication] = [:]
    var gateBusy = false
    var gateWaiters: [CheckedContinuation<Void, Never>] = []

    static let applicationPath = (try? ObjectPath("/org/swift_ble/gatt")) ?? .root
    /// The id of the advertisement of ``startAdvertising(_:)``.
    static let mainAdvertisement = 0

    /// The actor runs where the bus connection does its I/O.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        session.connection.executor.asUnownedSerialExecutor()
    }

    /// Connects to bluetoothd on `bus` and uses adapter `adapter` (the first one when nil).
    ///
    /// Succeeds even when bluetoothd or the adapter is missing: ``state`` then says so.
    /// Throws only when the bus cannot be reached or `adapter` is not an adapter name.
    public init(bus: Bus = .system, adapter: String? = nil, options: PeripheralManagerOptions = .init())
        async throws(BLEError)
    {
        let (session, name, path) = try await BlueZSession.open(
            bus: bus, adapter: adapter, logger: options.logger, callTimeout: options.callTimeout)
        self.session = session
        self.options = options
        self.adapterName = name
        self.adapterPath = path
        let (requests, continuation) = AsyncStream.makeStream(
            of: PeripheralRequest.self, bufferingPolicy: .bufferingOldest(max(1, options.requestBufferSize)))
        self.requests = requests
        core = GattServerCore(
            requests: continuation, events: eventBroadcast, requestTimeout: options.requestTimeout,
            logger: options.logger, connection: session.connection)
        session.connection.addObjectManager(at: Self.applicationPath)
        let events = session.events()
        stateBroadcast.set(Central.deriveState(session, adapter: path))
        follower = Task(executorPreference: session.connection.executor) { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.handle(event)
            }
        }
    }

    deinit {
        follower?.cancel()
        finishStreams()
        // Leaving the bus makes bluetoothd drop the application and the advertisement.
        session.close()
    }

    /// Unpublishes everything, stops advertising, and closes the bus connection; ``requests``
    /// and ``events`` end. Each call to bluetoothd has ``PeripheralManagerOptions/callTimeout``
    /// and is made even when the calling task is cancelled; when one fails, leaving the bus
    /// still makes bluetoothd drop the registrations. A value handed to
    /// ``updateValue(_:for:in:onSubscribedCentrals:timeout:)`` just before may not reach its
    /// subscribers: bluetoothd drops what a characteristic's notification socket still holds
    /// when the application is unregistered.
    public func close() async {
        let teardown = Task(executorPreference: session.connection.executor) {
            await self.tearDown()
        }
        await teardown.value
    }

    private func tearDown() async {
        follower?.cancel()
        follower = nil
        unpublishAllL2CAPChannels()
        await unregisterAllAdvertisements()
        if !services.isEmpty { try? await removeAllServices() }
        finishStreams()
        session.close()
    }

    private nonisolated func finishStreams() {
        core.requestContinuation.finish()
        core.dropSubscriptions()
        eventBroadcast.finish()
        stateBroadcast.finish()
    }

    // MARK: State and events

    /// The adapter's state now.
    public var state: ManagerState { stateBroadcast.value }

    /// The current state, then every change; ends when the manager closes.
    public nonisolated var states: AsyncStream<ManagerState> { stateBroadcast.stream() }

    /// Subscriptions, readiness, confirmations and lifecycle, from now on (each iteration holds
    /// the latest 64 when it falls behind); ends when the manager closes.
    public nonisolated var events: AsyncStream<PeripheralManagerEvent> { eventBroadcast.stream() }

    /// Waits until the adapter is powered on; see ``Central/waitUntilPoweredOn(timeout:)``.
    public func waitUntilPoweredOn(timeout: Duration = .seconds(10)) async throws(BLEError) {
        try await ManagerState.waitForPoweredOn(states, timeout: timeout)
    }

    /// The largest value one notification to `central` carries: its ATT MTU − 3, from the MTU
    /// bluetoothd reported with the central's last request or subscription (20 until then).
    public func maximumUpdateValueLength(for central: CentralID) -> Int {
        core.state.withLock { $0.mtus[central].map { max(0, Int($0) - 3) } } ?? 20
    }

    func handle(_ event: SessionEvent) async {
        stateBroadcast.set(Central.deriveState(session, adapter: adapterPath))
        switch event {
        case .daemonGone:
            // bluetoothd's registrations and notify channels died with it.
            applicationRegistered = false
            core.dropSubscriptions()
        case .daemonBack:
            await republish()
        default:
            break
        }
    }

    // MARK: One operation at a time

    func enterGate() async {
        guard gateBusy else {
            gateBusy = true
            return
        }
        await withCheckedContinuation { gateWaiters.append($0) }
    }

    func leaveGate() {
        if gateWaiters.isEmpty { gateBusy = false } else { gateWaiters.removeFirst().resume() }
    }
}
