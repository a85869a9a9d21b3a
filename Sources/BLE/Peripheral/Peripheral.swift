import BlueZ
import DBus
import Foundation

/// A remote peripheral, as Core Bluetooth's `CBPeripheral`: its connection, its services, and
/// the GATT operations on them. Obtained from ``Central/connect(_:timeout:)``; the same
/// object stays valid across disconnections and reconnections.
public actor Peripheral {
    /// Who it is.
    public nonisolated let id: PeripheralID
    nonisolated let devicePath: ObjectPath
    let session: BlueZSession
    weak var central: Central?
    nonisolated let eventBroadcast: EventBroadcast<ConnectionEvent>
    var connectionState: ConnectionState = .disconnected {
        // Operations are sent only while connected; those under way when the state leaves it
        // end with their replies, or fail when the link goes down (``linkDownHook(_:)``).
        didSet {
            guard connectionState != oldValue else { return }
            client.setLinkUp(connectionState == .connected)
            linkMTU.linkChanged(up: connectionState == .connected)
        }
    }
    /// Whether the mirror's MTU is this link's (see Peripheral+MTU.swift).
    nonisolated let linkMTU = LinkMTU()
    /// The link's rules (connect attempts, resolution, loss, reconnection, disconnection), run
    /// by the shell in Peripheral+Lifecycle.swift. ``connectionState`` follows its phase.
    var lifecycle: Lifecycle
    var nextLinkWaiter: UInt64 = 1
    /// The lifecycle's wake-ups set on the bus connection's loop, forgotten once not needed.
    var linkTimers: [Lifecycle.Timer: UInt64] = [:]
    /// The delay before the next reconnect attempt, while one runs.
    var reconnectDelay: Task<Void, Never>?
    /// Whether the session tells this peripheral of its device's events (see ``follow()``).
    var isFollowing = false
    /// Whether ``runLink(_:)`` is running the machine's actions: a reply or signal that an
    /// action brings back synchronously waits in ``deferredEntries`` until they are done.
    var isRunningLinkActions = false
    /// Work that came in while the link's actions ran, in arrival order (see ``enter(_:)``).
    var deferredEntries: [@Sendable (isolated Peripheral) -> Void] = []
    var lastDisconnectReason: DisconnectReason?
    /// The GATT bookkeeping kept on the actor (see Peripheral+GATT.swift).
    var gatt = GattClientState()
    /// Subscriptions the previous process had, made again once the link is back (see
    /// Restoration/Peripheral+Restoration.swift).
    var restoredSubscriptions: [RestorationRecord.Subscription] = []
    /// The services last discovered and the mirror's layout version they were built at,
    /// kept while it stays (see ``discoverServices(_:)``). Outside the actor's state, so
    /// that the central can let go of them as it goes.
    nonisolated let discovered = PosixMutex<(version: UInt64, services: [Service])?>(nil)
    /// The bus rules that bring subscribed characteristics' changes, by characteristic: one
    /// while its notify session lives (see ``BlueZSession/followCharacteristic(_:)``).
    var followedCharacteristics: [ObjectPath: SignalHandlerSubscription] = [:]
    /// The operation order, read echoes and notification delivery (see ``GattClient``).
    nonisolated let client: GattClient
    /// The pairing in flight, which concurrent ``pair(timeout:)`` calls share.
    var pairAttempt: SharedAttempt<Void>?
    /// `Device1.Paired` as last seen, to tell its changes (``ConnectionEvent/pairingChanged(isPaired:)``).
    var lastKnownPaired = false
    /// The ATT MTU last announced (``ConnectionEvent/mtuChanged(_:)``); the minimum until a link
    /// reports another.
    var announcedMTU = Peripheral.minimumMTU
    nonisolated let notificationBufferSize: Int
    nonisolated let notificationBufferPolicy: NotificationBufferPolicy
    nonisolated let operationTimeout: Duration
    /// Where L2CAP channels come from (``CentralOptions/l2capTransport``).
    nonisolated let l2capTransport: any L2CAPTransport
    /// The L2CAP channels opened to it, which end when its link drops.
    nonisolated let l2capLinks = L2CAPLinkTracker()

    /// The actor runs where the bus connection does its I/O.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        session.connection.executor.asUnownedSerialExecutor()
    }

    init(
        id: PeripheralID, devicePath: ObjectPath, session: BlueZSession, central: Central, policy: ReconnectPolicy,
        options: CentralOptions
    ) {
        self.notificationBufferSize = options.notificationBufferSize
        self.notificationBufferPolicy = options.notificationBufferPolicy
        self.operationTimeout = options.callTimeout
        self.l2capTransport = options.l2capTransport
        self.id = id
        self.devicePath = devicePath
        self.session = session
        self.central = central
        self.lifecycle = Lifecycle(policy: policy)
        self.eventBroadcast = EventBroadcast(diagnostics: session.diagnostics)
        self.client = GattClient(session: session, pipelineWindow: options.writeWithoutResponseWindow)
        session.routeValues(of: devicePath, to: client)
    }

    deinit {
        session.stopRoutingValues(of: devicePath, to: client)
        session.forgetObserver(of: devicePath)
        for subscription in followedCharacteristics.values { subscription.cancel() }
        reconnectDelay?.cancel()
        for id in linkTimers.values { session.connection.cancelScheduled(id) }
        eventBroadcast.finish()
        client.readiness.finish()
    }

    /// Starts following the device's objects (once): the session tells this actor of each
    /// change as it applies it (see ``SessionObserver``).
    func follow() {
        guard !isFollowing else { return }
        isFollowing = true
        lastKnownPaired = session.read { (try? $0.device(at: devicePath)) ?? nil }?.paired ?? false
        session.observe(device: devicePath, self)
    }

    // MARK: Public state

    /// The device's name, when BlueZ knows one.
    public var name: String? { (try? session.tree.device(at: devicePath))??.name }

    /// Where the connection stands.
    public var state: ConnectionState { connectionState }

    /// Whether the link is up and services are resolved.
    public var isConnected: Bool { connectionState == .connected }

    /// Connection events from now on: connected, disconnected (with a reason), reconnect
    /// attempts, services changed. Holds the latest 64 for a slow reader.
    public nonisolated var events: AsyncStream<ConnectionEvent> { eventBroadcast.stream() }

    /// Changes the reconnect policy (see ``ReconnectPolicy``).
    public func setReconnectPolicy(_ policy: ReconnectPolicy) {
        central?.restoration?.policyChanged(id, to: policy)
        runLink(lifecycle.policyChanged(policy))
    }

    // MARK: Following the device

    /// Nothing more can come over the session's bus connection (it went, or the central
    /// closed): the link is down, waiting operations fail with `error`, and notification
    /// iterations end instead of waiting for values that can no longer come.
    func endForGood(_ error: BLEError) {
        runLink(lifecycle.daemonGone(error))
        client.refuse(with: error)
        endNotifications()
    }

    func handle(_ event: SessionEvent) {
        switch event {
        case .daemonGone:
            lastDisconnectReason = nil
            // No link until the bus is back: operations say so, and nothing can re-arm a
            // subscription over a bus that is gone.
            if session.busLost {
                endForGood(session.unavailable)
            } else {
                runLink(lifecycle.daemonGone(session.unavailable))
            }
        case .signal(let message):
            guard message.member == BlueZSignal.disconnected, case .string(let name)? = message.body.first else {
                return
            }
            lastDisconnectReason = Self.reason(BlueZ.DisconnectReason(name: name))
        case .tree(let treeEvent, let changes, _):
            // Decoded only for a change of this device. (Values of characteristics do not come
            // this way: the session hands them to ``client`` directly.)
            if Self.changesDevice(changes, at: devicePath) {
                deviceChanged(facts(of: treeEvent, changes))
                // Connecting or disconnecting waits for what the mirror says now.
                runLink(lifecycle.deviceChanged(mirroredDevice(), daemonPresent: session.daemonStatus.present))
            }
            if Self.addsOrRemovesGattObjects(changes, besides: devicePath) { gattObjectsChanged() }
        case .daemonBack:
            // The bus (or bluetoothd) is back: operations no longer fail with its absence.
            client.setLinkUp(connectionState == .connected)
        }
    }

    // The two tests of a change are nonisolated: a closure written in this actor's methods is
    // isolated to it, and one handed to the standard library (built in Swift 5 mode) checks
    // its executor with the runtime at every call (about 900 instructions each).

    /// Whether `changes` touch `Device1` of the device at `path`.
    private nonisolated static func changesDevice(_ changes: [ObjectTreeChange], at path: ObjectPath) -> Bool {
        changes.contains { $0.path == path && $0.interface == BlueZInterface.device1 }
    }

    /// Whether `changes` remove `Device1` of the device at `path` (matched in place: comparing
    /// whole changes ran their derived equality, code for every case, at each device change).
    private nonisolated static func removesDevice(_ changes: [ObjectTreeChange], at path: ObjectPath) -> Bool {
        changes.contains { change in
            if case .removed(path, BlueZInterface.device1) = change { true } else { false }
        }
    }

    /// Whether `changes` add or remove a service or characteristic (below `path`'s device).
    private nonisolated static func addsOrRemovesGattObjects(
        _ changes: [ObjectTreeChange], besides path: ObjectPath
    ) -> Bool {
        changes.contains { change in
            guard change.path != path,
                change.interface == BlueZInterface.gattService1
                    || change.interface == BlueZInterface.gattCharacteristic1
            else { return false }
            if case .changed = change { return false }
            return true
        }
    }

    /// What one event says of the device: whether it still exists, and its `Connected` and
    /// `Paired` as the event carries them (nil: not in this change).
    ///
    /// Taken from the event, not from the mirror: signals are applied to the mirror as they
    /// arrive, ahead of this actor, so the mirror may already hold the next signal's effect
    /// (`Connected=false` while the `Disconnected` reason before it is still on its way).
    private func facts(of event: ObjectTreeEvent, _ changes: [ObjectTreeChange]) -> DeviceFacts {
        if Self.removesDevice(changes, at: devicePath) { return DeviceFacts(present: false) }
        if case .propertiesChanged(devicePath, BlueZInterface.device1, let changed, _) = event {
            func flag(_ key: String) -> Bool? { if case .boolean(let value)? = changed[key] { value } else { nil } }
            return DeviceFacts(
                present: true, connected: flag(DeviceProperties.Key.connected),
                paired: flag(DeviceProperties.Key.paired))
        }
        let devicePath = self.devicePath
        guard let device = session.read({ (try? $0.device(at: devicePath)) ?? nil }) else {
            return DeviceFacts(present: false)
        }
        return DeviceFacts(present: true, connected: device.connected, paired: device.paired)
    }

    struct DeviceFacts {
        var present: Bool
        var connected: Bool?
        var paired: Bool?
    }

    private func deviceChanged(_ facts: DeviceFacts) {
        if !facts.present {
            // The tree is emptied (this event) before the session says bluetoothd left.
            linkWentDown(session.daemonStatus.present ? .deviceRemoved : .bluetoothUnavailable)
        } else if facts.connected == false, connectionState == .connected,
            let adapter = BlueZPath.adapter(containing: devicePath)
        {
            linkDropped(adapter: adapter)
        }
        // A removed device lost its bond; bluetoothd leaving empties the tree but keeps it.
        let paired =
            facts.present ? (facts.paired ?? lastKnownPaired) : (session.daemonStatus.present ? false : lastKnownPaired)
        if paired != lastKnownPaired {
            lastKnownPaired = paired
            eventBroadcast.yield(.pairingChanged(isPaired: paired))
        }
    }

    /// GATT objects were added or removed: handles to removed ones are stale. Told while
    /// connected, or whenever handles the app holds became invalid (a device removed and
    /// found again); not at the first resolution.
    func gattObjectsChanged() {
        if invalidateServices() || connectionState == .connected {
            eventBroadcast.yield(.servicesChanged)
        }
    }

    private static func reason(_ reason: BlueZ.DisconnectReason?) -> DisconnectReason {
        switch reason {
        case .local?: .local
        case .remote?: .remote
        case .timeout?: .timeout
        case .authentication?: .authentication
        case .suspend?: .suspend
        default: .unknown
        }
    }

    /// `Connected` turned false without ``disconnect()``. bluetoothd drops the links of an
    /// adapter powering off before it announces `Powered=false` (with a D-Bus `Set` on 5.73 and
    /// later, `PowerState` says `on-disabling` first), so unless the reason is already known
    /// (the peripheral's or the link's, from `Device1.Disconnected`), the event waits a moment
    /// (``adapterPowerGrace``) for the adapter to go off. Pending operations fail at once.
    private func linkDropped(adapter: ObjectPath) {
        let reason = lastDisconnectReason ?? .unknown
        let session = self.session
        if Self.adapterOff(session, adapter) {
            linkWentDown(.adapterPoweredOff)
            return
        }
        if lifecycle.isDisconnecting || (reason != .unknown && reason != .local) {
            linkWentDown(reason)
            return
        }
        let adapterEvents = session.events(under: adapter)
        guard linkWentDown(reason, announce: false) else {
            adapterEvents.cancel()
            return
        }
        Task(executorPreference: session.connection.executor) { [weak self] in
            let off = try? await withDeadline(
                Self.adapterPowerGrace, what: "waiting for the adapter", timedBy: session.connection
            ) {
                () throws(BLEError) -> Bool in
                var events = adapterEvents.makeAsyncIterator()
                while true {
                    if Self.adapterOff(session, adapter) { return true }
                    guard await events.next() != nil else { return false }
                }
            }
            await self?.announceLinkDown(off == true ? .adapterPoweredOff : reason)
        }
    }

    /// How long an unexplained link loss waits for the adapter to announce it powered off.
    static let adapterPowerGrace = Duration.milliseconds(100)

    private static func adapterOff(_ session: BlueZSession, _ adapter: ObjectPath) -> Bool {
        let properties = (try? session.tree.adapter(at: adapter)) ?? nil
        let goingOff: Set<PowerState> = [.onDisabling, .off, .offBlocked]
        return properties?.powered == false || properties?.powerState.map(goingOff.contains) == true
    }

    /// The link is down: pending operations fail, then (unless `announce` is false) the event
    /// and reconnection. Returns whether the link was up.
    @discardableResult
    private func linkWentDown(_ reason: DisconnectReason, announce: Bool = true) -> Bool {
        guard lifecycle.isLinked else { return false }
        lastDisconnectReason = nil
        runLink(lifecycle.linkDown(reason, announce: announce))
        return true
    }

    private func announceLinkDown(_ reason: DisconnectReason) {
        runLink(lifecycle.announceLinkDown(reason))
    }

    /// The link dropped: every pending GATT operation fails now.
    func linkDownHook(_ reason: DisconnectReason) {
        client.linkWentDown(BLEError(.disconnected, message: "the link dropped (\(reason))"))
        l2capLinks.linkLost()
    }
}
