import BlueZ
import DBus
import Foundation

/// The central role, as Core Bluetooth's `CBCentralManager`: adapter state, scanning,
/// connecting, and the peripherals BlueZ already knows.
///
/// ```swift
/// let central = try await Central()                       // system bus, default adapter
/// try await central.waitUntilPoweredOn(timeout: .seconds(5))
/// for try await discovery in central.scan(services: [BluetoothUUID("180D")]) {
///     let peripheral = try await central.connect(discovery.id)
///     …
/// }
/// ```
///
/// A central runs on its bus connection's I/O thread (its actor executor), so its calls to
/// bluetoothd cost no thread hop. ``close()`` (or releasing the last reference) stops it.
public actor Central {
    let session: BlueZSession
    /// The options it was created with.
    public nonisolated let options: CentralOptions
    /// The adapter it uses, e.g. `hci0`.
    public nonisolated let adapterName: String
    nonisolated let adapterPath: ObjectPath
    nonisolated let stateBroadcast: Broadcast<ManagerState>
    var follower: Task<Void, Never>?
    var discovery = DiscoveryMachine<DiscoveryWaiter>()
    /// What ends each running scan with an error, by scan id (see Scanning/DiscoverySessions.swift).
    var scanEnders: [UInt64: @Sendable (BLEError) -> Void] = [:]
    var peripherals: [PeripheralID: Peripheral] = [:]
    var connectAttempts: [PeripheralID: SharedAttempt<Peripheral>] = [:]
    /// The pairing agent, registered with bluetoothd before this central first connects or pairs.
    nonisolated let pairingAgent: PairingAgent
    /// Keeps what this central does for the next process, with ``CentralOptions/restoreIdentifier``.
    nonisolated let restoration: RestorationRecorder?
    /// What this central took over from the previous process that used its
    /// ``CentralOptions/restoreIdentifier``: nil without one, or when nothing was kept. Ready
    /// when the initializer returns.
    public private(set) var restoredState: RestoredState?

    /// The actor runs where the bus connection does its I/O.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        session.connection.executor.asUnownedSerialExecutor()
    }

    /// The bus connection's I/O thread as a task executor, where this central, its peripherals
    /// and characteristics run. A loop of GATT operations in a task that prefers it costs no
    /// thread switch per operation (the reply resumes the task on the thread that read it):
    ///
    /// ```swift
    /// try await withTaskExecutorPreference(central.executor) {
    ///     for _ in 0..<1000 { samples.append(try await characteristic.read()) }
    /// }
    /// ```
    ///
    /// From any other executor an operation costs one hop back. Code run there must not block.
    public nonisolated var executor: ConnectionExecutor { session.connection.executor }

    /// Connects to bluetoothd on `bus` and follows adapter `adapter` (the first one when nil).
    ///
    /// Succeeds even when bluetoothd or the adapter is missing: ``state`` then says so and
    /// changes when they appear. Throws only when the bus itself cannot be reached.
    public init(bus: Bus = .system, adapter: String? = nil, options: CentralOptions = CentralOptions())
        async throws(BLEError)
    {
        // The identifier's lock first: a second central with it fails before touching the bus.
        let kept = try Self.openRestoration(options)
        let (session, name, path) = try await BlueZSession.open(
            bus: bus, adapter: adapter, logger: options.logger, callTimeout: options.callTimeout)
        self.session = session
        self.options = options
        self.adapterName = name
        self.adapterPath = path
        self.stateBroadcast = Broadcast(.unknown, diagnostics: session.diagnostics)
        self.pairingAgent = PairingAgent(
            session: session, handler: options.pairingHandler, answerTimeout: options.pairingAnswerTimeout)
        self.restoration = kept.map { store, record in
            RestorationRecorder(
                store: store, record: record ?? RestorationRecord(identifier: store.identifier, adapter: name),
                logger: options.logger)
        }
        // The adapter's own events only: a scan's advertisements do not wake the central.
        let events = session.events(at: path)
        stateBroadcast.set(Self.deriveState(session, adapter: path))
        let task = Task(executorPreference: session.connection.executor) { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.handle(event)
            }
        }
        follower = task
        if let record = kept?.record { restoredState = await restore(record) }
    }

    deinit {
        restoration?.freeze()
        follower?.cancel()
        stateBroadcast.finish()
        // A peripheral's discovered characteristics hold it: without this, the peripherals
        // (and their characteristics) would outlive the central.
        for peripheral in peripherals.values { peripheral.forgetDiscoveredServices() }
        session.close()
    }

    /// Stops following bluetoothd, unregisters the pairing agent and closes the bus connection.
    /// Links this central opened stay up only if BlueZ keeps them (it does: quirk Q15); call
    /// ``Peripheral/disconnect()`` first.
    public func close() {
        // What was kept stays as it is for the next process: the iterations and scans this
        // close ends are not the app's doing.
        restoration?.freeze()
        follower?.cancel()
        follower = nil
        pairingAgent.close()
        stateBroadcast.finish()
        session.close()
    }

    /// Whether the D-Bus connection itself is down (the bus daemon stopped, the socket reset),
    /// rather than bluetoothd having left the bus. Meanwhile the state is
    /// ``ManagerState/resetting`` and every call fails at once with
    /// ``BLEError/Code/bluetoothUnavailable`` ("the system bus went away"); the scans and
    /// notification iterations that ran have ended. The central connects to the bus again
    /// when its address answers (after 0.1 s, then twice as long each time, up to 2 s) and
    /// re-reads bluetoothd as after its restart; this is then false again.
    public nonisolated var isBusLost: Bool { session.busLost }

    /// Live counters of suspended tasks, open streams and bus calls (see ``BLEDiagnostics``).
    public nonisolated var diagnostics: BLEDiagnostics { session.diagnostics }

    // MARK: State

    /// The adapter's state now.
    public var state: ManagerState { stateBroadcast.value }

    /// The current state, then every change; ends when the central closes.
    public nonisolated var states: AsyncStream<ManagerState> { stateBroadcast.stream() }

    /// Waits until the adapter is powered on.
    ///
    /// - Throws: ``BLEError/Code/timeout`` past `timeout`; ``BLEError/Code/unsupported`` or
    ///   ``BLEError/Code/unauthorized`` at once when the state says it cannot happen.
    public func waitUntilPoweredOn(timeout: Duration = .seconds(10)) async throws(BLEError) {
        try await ManagerState.waitForPoweredOn(states, timeout: timeout)
    }

    func handle(_ event: SessionEvent) {
        if Self.mayChangeState(event, adapter: adapterPath) {
            stateBroadcast.set(Self.deriveState(session, adapter: adapterPath))
        }
        switch event {
        case .daemonGone:
            // bluetoothd's discovery sessions died with it.
            discovery.reset()
        case .tree(let treeEvent, let changes, let serial):
            let poweredOff =
                changes.contains { change in
                    change.path == adapterPath && change.interface == BlueZInterface.adapter1
                } && state != .poweredOn
            if poweredOff { discovery.reset() }
            discoveryMayHaveStopped(treeEvent, serial: serial)
        default:
            break
        }
    }

    /// Whether the state may differ after this event: the adapter's object changed, the tree
    /// was replaced, or bluetoothd came or went. Deriving it decodes the adapter's properties,
    /// too much to do for every notification and advertisement.
    static func mayChangeState(_ event: SessionEvent, adapter: ObjectPath) -> Bool {
        guard case .tree(let treeEvent, let changes, _) = event else { return true }
        switch treeEvent {
        case .snapshot, .reset: return true
        default: return changes.contains { $0.path == adapter && $0.interface == BlueZInterface.adapter1 }
        }
    }

    static func deriveState(_ session: BlueZSession, adapter: ObjectPath) -> ManagerState {
        let status = session.daemonStatus
        if status.accessDenied { return .unauthorized }
        guard status.present else { return status.everSeen ? .resetting : .unknown }
        guard let properties = try? session.tree.adapter(at: adapter) else { return .unsupported }
        return properties.powered ? .poweredOn : .poweredOff
    }

    // MARK: Adapters

    /// The adapters bluetoothd has, e.g. `["hci0", "hci1"]`.
    public func adapters() -> [String] {
        session.tree.adapterPaths().sorted().compactMap { $0.elements.last.map(String.init) }
    }

    /// Powers the adapter on or off (`Adapter1.Powered`); on return ``state`` says so.
    public func setPowered(_ on: Bool) async throws(BLEError) {
        let states = self.states
        _ = try await session.call(
            adapterPath, .properties, BlueZMethod.set,
            [.string(BlueZInterface.adapter1.rawValue), .string("Powered"), .variant(.boolean(on))])
        // bluetoothd replies when the kernel confirmed and announces `Powered` after the reply
        // (`property_set_mode_complete`): wait for the announcement, or for bluetoothd or the
        // adapter to go, which ends the question.
        let wanted: ManagerState = on ? .poweredOn : .poweredOff
        try await withDeadline(
            options.callTimeout, what: "waiting for the adapter to say \(wanted)", timedBy: session.connection
        ) {
            () throws(BLEError) in
            for await state in states where state == wanted || (state != .poweredOn && state != .poweredOff) {
                return
            }
        }
    }
}
