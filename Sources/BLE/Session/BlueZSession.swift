import BlueZ
import DBus
import Foundation

/// The SDK's view of bluetoothd over one bus connection: a mirror of its object tree kept by
/// one ordered stream of its signals, the owner of `org.bluez` followed through
/// `NameOwnerChanged`, and calls that fail fast while bluetoothd is away.
///
/// Signals are accepted only from the current owner of `org.bluez` (the DBus layer resolves
/// the well-known sender), so another client on the bus cannot forge BlueZ state.
final class BlueZSession: Sendable {
    struct Listener {
        var prefix: ObjectPath?
        /// Only events about `prefix` itself, not what lies below it.
        var exact = false
        var buffer: EventBuffer<SessionEvent>
    }

    struct State {
        var tree = BlueZObjectTree()
        var owner: BusName?
        var everSeenOwner = false
        var accessDenied = false
        var listeners: [UInt64: Listener] = [:]
        var nextListener: UInt64 = 1
        var subscription: SignalHandlerSubscription?
        var refreshes = PropertyRefreshes()
        /// Where each device's `GattCharacteristic1.Value` changes go (its peripheral's GATT
        /// client), by device path.
        var valueSinks: [Substring: WeakValueSink] = [:] {
            // Any change of where values go drops the shortcut to the last one.
            didSet { lastValueRoute = nil }
        }
        /// The characteristic whose value changed last and where it went: notifications come
        /// in runs from one characteristic, and a run's every signal is routed by comparing
        /// its path in place (no path text, device prefix or hashed look-up per value).
        var lastValueRoute: ValueRoute?
        /// Who follows each device and the objects below it (its peripheral), by device path.
        var observers: [ObjectPath: WeakObserver] = [:]
        /// Who follows a whole subtree (a scan, its adapter's), with the token
        /// ``observe(under:_:)`` returned: an array, which each event reads without a copy.
        var subtreeObservers: [(token: UInt64, prefix: ObjectPath, observer: any SessionObserver)] = []
        var closed = false
        /// The bus connection itself closed under the session (not by ``close()``).
        var busLost = false
    }

    let connection: Connection
    let logger: BLELogger
    let callTimeout: Duration
    /// What the central and everything it hands out leave waiting.
    let diagnostics: BLEDiagnostics
    private let state = PosixMutex(State())
    private let names = PreviewNames()

    private init(connection: Connection, logger: BLELogger, callTimeout: Duration) {
        self.connection = connection
        self.logger = logger
        self.callTimeout = callTimeout
        self.diagnostics = BLEDiagnostics(bus: connection.counters, connectionName: connection.uniqueName.rawValue)
    }

    /// Connects to the bus, subscribes to BlueZ's signals, reads the tree, and starts
    /// following bluetoothd.
    /// Opens a session and resolves `adapter` (the first adapter bluetoothd has when nil, else
    /// `hci0`), for the managers that follow one adapter.
    static func open(
        bus: Bus, adapter: String?, logger: BLELogger, callTimeout: Duration
    ) async throws(BLEError) -> (session: BlueZSession, name: String, path: ObjectPath) {
        let session = try await open(bus: bus, logger: logger, callTimeout: callTimeout)
        let name = adapter ?? session.tree.adapterPaths().sorted().first?.elements.last.map(String.init) ?? "hci0"
        guard let path = try? BlueZPath.adapter(named: name) else {
            session.close()
            throw BLEError(.invalidArguments, message: "\"\(name)\" is not an adapter name like hci0")
        }
        return (session, name, path)
    }

    static func open(bus: Bus, logger: BLELogger, callTimeout: Duration) async throws(BLEError) -> BlueZSession {
        let connection: Connection
        do {
            // The connection comes back when the bus does (its I/O thread, which the actors
            // run on, stays): the session then follows bluetoothd again (``reattach()``).
            var options = ConnectionOptions()
            options.reconnection = BusReconnection()
            connection = try await Connection(bus: bus.connectionBus, options: options)
        } catch {
            throw BLEError(.bluetoothUnavailable, message: "cannot reach the bus: \(error.message)", underlying: error)
        }
        let session = BlueZSession(connection: connection, logger: logger, callTimeout: callTimeout)
        connection.whenReopened { [weak session] _ in
            guard let session else { return }
            Task(executorPreference: session.connection.executor) { await session.reattach() }
        }
        do {
            try await session.start()
        } catch {
            connection.close()
            throw error
        }
        return session
    }

    private func start() async throws(BLEError) {
        try await subscribe()
        // Subscribed first, then read: nothing can slip between the two.
        let owner = try? await connection.nameOwner(of: BlueZService.busName)
        if let owner { await resync(owner: owner) }
    }

    /// The bus is back (a new unique name, none of the old rules): subscribe again, then
    /// re-read bluetoothd as after its restart (``SessionEvent/daemonBack``), or stay lost
    /// until the next time when the bus went again meanwhile.
    private func reattach() async {
        guard state.withLock({ !$0.closed && $0.busLost }) else { return }
        do {
            try await subscribe()
        } catch {
            logger.log(.debug, "following bluetoothd on the bus that came back failed: \(error)")
            return
        }
        // Back only if the bus did not go again meanwhile: this runs on the I/O thread, as the
        // loss does, so either the loss came first (and the next return reattaches) or it
        // comes after and finds the session attached.
        guard connection.isConnected else { return }
        state.withLock { $0.busLost = false }
        logger.log(.info, "the system bus is back")
        let owner = try? await connection.nameOwner(of: BlueZService.busName)
        if let owner { await resync(owner: owner) }
    }

    private func subscribe() async throws(BLEError) {
        let subscription: SignalHandlerSubscription
        do {
            // One ordered handler for both: BlueZ's signals and changes of its owner. It runs on
            // the I/O thread as each signal is dispatched, so the mirror is current before any
            // reply bluetoothd sent after that signal resumes its caller (a reply is a barrier),
            // and no buffer or task stands between a signal and its effect.
            subscription = try await connection.signalHandler(
                matchingAny: Self.signalRules + [
                    MatchRule(
                        sender: .bus, interface: .bus, member: try MemberName("NameOwnerChanged"),
                        arguments: [0: BlueZService.busName.rawValue])
                ],
                ended: { [weak self] in self?.subscriptionEnded() },
                preview: { [weak self] signal in
                    guard let self else { return false }
                    return takePropertiesChanged(signal) || takeInterfacesAdded(signal)
                },
                { [weak self] message in self?.consume(message) })
        } catch {
            throw BLEError(error)
        }
        state.withLock { $0.subscription = subscription }
    }

    /// The interfaces whose objects the session mirrors (the characteristics' changes by rules
    /// of their own, see ``signalRules``), the most frequent first: `InterfacesAdded` names
    /// them, and a name among these is taken without building it anew.
    static let mirroredInterfaces = [
        BlueZInterface.device1, BlueZInterface.gattCharacteristic1, BlueZInterface.gattDescriptor1,
        BlueZInterface.gattService1, BlueZInterface.adapter1, BlueZInterface.leAdvertisingManager1,
        BlueZInterface.battery1,
    ]

    /// What the session asks the bus for: bluetoothd's objects coming and going, `Device1`'s
    /// own signals, and the property changes of every interface it mirrors but one.
    ///
    /// Characteristics are left out: bluetoothd sends a `PropertiesChanged(Value)` with every
    /// read (its echo, just before the reply) and every notification, to every client whose
    /// rules match, and a client that listened to them all would receive, decode and drop one
    /// signal per read for nothing. A characteristic's changes come by a rule of its own while
    /// someone subscribes to it (``followCharacteristic(_:)``); nothing else needs them (its
    /// `MTU` is read once per link when first needed, BlueZ quirk Q10).
    static let signalRules: [MatchRule] = {
        let mirrored = mirroredInterfaces.filter { $0 != BlueZInterface.gattCharacteristic1 }
        return [
            MatchRule(sender: BlueZService.busName, interface: .objectManager),
            MatchRule(sender: BlueZService.busName, interface: BlueZInterface.device1),
        ]
            + mirrored.map { interface in
                MatchRule(
                    sender: BlueZService.busName, interface: .properties, member: BlueZSignal.propertiesChanged,
                    arguments: [0: interface.rawValue])
            }
    }()

    /// Delivers the property changes of the characteristic at `path` (its `Notifying`, and
    /// the `Value` changes its device's GATT client takes) until the subscription returned is
    /// cancelled. The bus has the rule when this returns, so a `StartNotify` sent after it
    /// cannot outrun it.
    func followCharacteristic(_ path: ObjectPath) async throws(BLEError) -> SignalHandlerSubscription {
        let rule = MatchRule(
            sender: BlueZService.busName, path: path, interface: .properties, member: BlueZSignal.propertiesChanged,
            arguments: [0: BlueZInterface.gattCharacteristic1.rawValue])
        do {
            return try await connection.signalHandler(matchingAny: [rule]) { [weak self] message in
                self?.consume(message)
            }
        } catch {
            throw BLEError(error)
        }
    }

    /// Stops following bluetoothd and closes the bus connection; listeners' streams end.
    func close() {
        let (subscription, listeners, observers) = state.withLock { state in
            defer {
                state.listeners.removeAll()
                state.subscription = nil
                state.valueSinks.removeAll()
                state.observers.removeAll()
                state.subtreeObservers.removeAll()
                state.closed = true
            }
            // Every observer is told: a peripheral's iterations end with its session.
            let observers = state.subtreeObservers.map(\.observer) + state.observers.values.compactMap(\.observer)
            return (state.subscription, Array(state.listeners.values), observers)
        }
        subscription?.cancel()
        for listener in listeners { listener.buffer.finish() }
        for observer in observers { observer.sessionEnded() }
        connection.close()
    }

    // MARK: Following bluetoothd

    /// The subscription to BlueZ's signals ended. Unless the session closed it, the bus
    /// connection went (the bus daemon stopped, the socket reset): to everyone who follows the
    /// session that is bluetoothd leaving. Pending calls have failed already (the DBus layer
    /// fails them when the bus goes); later ones fail at once with ``unavailable`` until the
    /// connection is back on the bus (``reattach()``), or for good when it closed.
    ///
    /// The mirror stays as last known, unlike when bluetoothd leaves: nothing can change it
    /// meanwhile, and emptying it would make every handed-out characteristic report a services
    /// change that did not happen instead of the bus that went. The snapshot read when the bus
    /// is back replaces it.
    private func subscriptionEnded() {
        let lost = state.withLock { state -> Bool in
            guard !state.closed, !state.busLost else { return false }
            state.busLost = true
            state.owner = nil
            state.subscription = nil
            return true
        }
        guard lost else { return }
        logger.log(.info, "the system bus went away")
        broadcast(.daemonGone)
        // Closed for good (no reconnection): nothing will follow, every listener ends.
        guard connection.isClosed else { return }
        let (listeners, observers) = state.withLock { state in
            defer {
                state.listeners.removeAll()
                state.subtreeObservers.removeAll()
            }
            return (Array(state.listeners.values), state.subtreeObservers.map(\.observer))
        }
        for listener in listeners { listener.buffer.finish() }
        for observer in observers { observer.sessionEnded() }
    }

    /// The error of a call made while bluetoothd is away: it left the bus (and may come
    /// back), or the bus itself went.
    var unavailable: BLEError { state.withLock { $0.busLost } ? Self.busGone : .bluetoothGone }

    /// Whether the bus connection closed under the session.
    var busLost: Bool { state.withLock { $0.busLost } }

    /// Transient: the connection comes back when the bus does.
    private static let busGone = BLEError(.bluetoothUnavailable, message: "the system bus went away")

    /// One signal, on the I/O thread: it must not block.
    private func consume(_ message: DBusMessage) {
        if message.sender == .bus {
            guard message.body.count == 3, case .string(let newOwner) = message.body[2] else { return }
            if newOwner.isEmpty {
                logger.log(.info, "bluetoothd left the bus")
                apply(.reset)
                broadcast(.daemonGone)
            } else if let owner = try? BusName(newOwner) {
                logger.log(.info, "bluetoothd is on the bus as \(owner)")
                // The re-read is a call: it cannot be awaited here. Signals that arrive before
                // its reply apply to the empty tree and are then overtaken by the snapshot.
                Task(executorPreference: connection.executor) { [weak self] in await self?.resync(owner: owner) }
            }
            return
        }
        do {
            guard let event = try ObjectTreeEvent(signal: message) else {
                broadcast(.signal(message))
                return
            }
            if case .propertiesChanged(let path, let interface, let changed, let invalidated) = event {
                applyPropertiesChanged(path, interface, changed, invalidated, serial: message.serial)
                return
            }
            apply(event, serial: message.serial)
        } catch {
            logger.log(.debug, "ignored a malformed BlueZ signal: \(error.message)")
        }
    }

    /// A `PropertiesChanged`, decoded: applied to the mirror, except a characteristic's `Value`
    /// (a notification, an indication or a read's echo that came with other changes, or before
    /// bluetoothd's name was known), which goes to the one GATT client of its device and
    /// nowhere else. Nothing reads values from the mirror.
    private func applyPropertiesChanged(
        _ path: ObjectPath, _ interface: InterfaceName, _ changed: [String: DBusValue], _ invalidated: [String],
        serial: UInt32
    ) {
        var changed = changed
        if interface == BlueZInterface.gattCharacteristic1,
            case .bytes(let value)? = changed.removeValue(forKey: names.value)
        {
            routeValue(value, at: path, serial: serial)
            if changed.isEmpty && invalidated.isEmpty { return }
        }
        let event = ObjectTreeEvent.propertiesChanged(path, interface, changed: changed, invalidated: invalidated)
        apply(event, serial: serial)
        repairConnected(after: event)
    }

    /// A `PropertiesChanged` from bluetoothd's current unique name, read once: a notification
    /// or read echo (`GattCharacteristic1`'s `Value` and nothing else) goes to its device's
    /// client with nothing else decoded; any other change (a device's every change, an
    /// advertiser's RSSI) is decoded straight into the mirror's form and applied as
    /// ``consume(_:)`` would. Anything else is left to it.
    private func takePropertiesChanged(_ signal: borrowing ReceivedSignal) -> Bool {
        guard signal.is(names.propertiesChanged, of: names.properties) else { return false }
        // One lock for both: who bluetoothd is, and where its last value went.
        let (owner, last) = state.withLock { ($0.owner, $0.lastValueRoute) }
        guard let owner, signal.isSent(by: owner),
            let change = signal.propertiesChange(
                loneBytesOf: names.gattCharacteristic1, property: names.value, known: names.mirrored)
        else { return false }
        switch change {
        case .loneBytes(let value):
            takeValue(value, of: signal, after: last)
        case .changed(let interface, let changed, let invalidated):
            guard let path = signal.path else { return false }
            applyPropertiesChanged(path, interface, changed, invalidated, serial: signal.serial)
        }
        return true
    }

    /// A notification or read echo: to the sink the characteristic's last value went to when
    /// `signal` comes from that characteristic (compared in place, no path made), else to its
    /// device's client, which becomes the route.
    private func takeValue(_ value: Data, of signal: borrowing ReceivedSignal, after last: ValueRoute?) {
        if let last, signal.hasPath(last.path) {
            last.sink?.valueChanged(last.path, value, serial: signal.serial)
            return
        }
        guard let path = signal.path, let device = BlueZPath.deviceText(containing: path) else { return }
        let sink = state.withLock { state -> WeakValueSink? in
            let sink = state.valueSinks[device]
            if let sink { state.lastValueRoute = ValueRoute(path: path, sink: sink.sink) }
            return sink
        }
        sink?.sink?.valueChanged(path, value, serial: signal.serial)
    }

    /// Where the values of the characteristic at `path` go. A class: read out of the lock for
    /// every value, a struct's copy copied its weak reference and destroyed it after, where
    /// this costs a retain. The reference is its own (not a ``WeakValueSink``): read through
    /// a struct, it was copied (`swift_weakCopyInit`) to be read.
    final class ValueRoute: Sendable {
        let path: ObjectPath
        weak let sink: (any GattValueSink)?

        init(path: ObjectPath, sink: (any GattValueSink)?) {
            self.path = path
            self.sink = sink
        }
    }

    /// An `InterfacesAdded` from bluetoothd's current unique name (a device for every new
    /// advertiser, the GATT objects of a connection), decoded straight into the mirror's form
    /// and applied as ``consume(_:)`` would. Anything else is left to it.
    private func takeInterfacesAdded(_ signal: borrowing ReceivedSignal) -> Bool {
        guard signal.is(names.interfacesAdded, of: names.objectManager),
            let owner = state.withLock({ $0.owner }), signal.isSent(by: owner),
            let added = signal.interfacesAdded(known: names.mirrored)
        else { return false }
        apply(.interfacesAdded(added.path, added.interfaces), serial: signal.serial)
        return true
    }

    private func routeValue(_ value: Data, at path: ObjectPath, serial: UInt32) {
        guard let device = BlueZPath.deviceText(containing: path) else { return }
        let sink = state.withLock { $0.valueSinks[device]?.sink }
        sink?.valueChanged(path, value, serial: serial)
    }

    /// Sends the `Value` changes of `device`'s characteristics to `sink` (one per device: a
    /// later one replaces it).
    func routeValues(of device: ObjectPath, to sink: any GattValueSink) {
        state.withLock { state in
            guard !state.closed else { return }
            state.valueSinks[Substring(device.rawValue)] = WeakValueSink(sink: sink)
        }
    }

    /// Stops sending `device`'s value changes to `sink`, if it is still the one.
    func stopRoutingValues(of device: ObjectPath, to sink: any GattValueSink) {
        state.withLock { state in
            let key = Substring(device.rawValue)
            if state.valueSinks[key]?.sink === sink || state.valueSinks[key]?.sink == nil {
                state.valueSinks[key] = nil
            }
        }
    }

    /// The session does not keep a peripheral's client alive.
    struct WeakValueSink {
        weak var sink: (any GattValueSink)?
    }

    /// Tells `observer` of every event about `device` and the objects below it, and of
    /// bluetoothd or the bus coming and going, from now on (one per device: a later one
    /// replaces it). See ``SessionObserver``.
    func observe(device: ObjectPath, _ observer: any SessionObserver) {
        state.withLock { state in
            guard !state.closed else { return }
            state.observers[device] = WeakObserver(observer: observer)
        }
    }

    /// Tells `observer` of every event about `prefix` or what lies below it, and of bluetoothd
    /// or the bus coming and going, from now on, until ``stopObserving(_:)`` with the token
    /// returned; the session holds it until then. On a session closed already (or whose bus
    /// went for good) it is told so at once (``SessionObserver/sessionEnded()``).
    func observe(under prefix: ObjectPath, _ observer: any SessionObserver) -> UInt64 {
        let connectionClosed = connection.isClosed
        let (token, ended) = state.withLock { state -> (UInt64, Bool) in
            let token = state.nextListener
            state.nextListener += 1
            let ended = state.closed || (state.busLost && connectionClosed)
            if !ended { state.subtreeObservers.append((token, prefix, observer)) }
            return (token, ended)
        }
        if ended { observer.sessionEnded() }
        return token
    }

    /// Stops telling the observer of `token` anything.
    func stopObserving(_ token: UInt64) {
        state.withLock { $0.subtreeObservers.removeAll { $0.token == token } }
    }

    /// Forgets the observer of `device` once it is gone (its deinitializer calls this; one
    /// that replaced it stays).
    func forgetObserver(of device: ObjectPath) {
        state.withLock { state in
            if state.observers[device] != nil, state.observers[device]?.observer == nil {
                state.observers[device] = nil
            }
        }
    }

    /// The session does not keep a peripheral alive.
    struct WeakObserver {
        weak var observer: (any SessionObserver)?
    }

    private func resync(owner: BusName) async {
        state.withLock { state in
            state.owner = owner
            state.everSeenOwner = true
        }
        do {
            let reply = try await connection.call(
                destination: BlueZService.busName, path: BlueZService.rootPath, interface: .objectManager,
                member: BlueZMethod.getManagedObjects, timeout: callTimeout)
            apply(try ObjectTreeEvent(managedObjectsReply: reply))
            state.withLock { $0.accessDenied = false }
        } catch {
            if error.name == DBusError.StandardName.accessDenied { state.withLock { $0.accessDenied = true } }
            logger.log(.debug, "GetManagedObjects failed: \(error)")
        }
        broadcast(.daemonBack)
    }

    /// Brings the mirror of a device whose GATT objects arrived with its resolution up to
    /// date, at a cost that does not depend on how many other objects bluetoothd holds: no
    /// `GetManagedObjects`, and one call. Returns whether the mirror now holds this link's MTU.
    ///
    /// bluetoothd may send `ServicesResolved=true` before the last GATT `InterfacesAdded`
    /// (Q1), but it flushes every pending signal before it sends any reply, and signals are
    /// applied as they are dispatched (``consume(_:)``): once the reply to any call made now
    /// has arrived, the mirror holds every object added before it. That call is the read of
    /// the MTU (``refreshMTU(of:)``) from a characteristic the mirror already holds. Only when
    /// none has arrived yet does a `GetAll` of the device go first, as the barrier. (A
    /// `Connected` bluetoothd never announced is repaired where it shows: a Connect answered on
    /// a device the mirror thinks disconnected, or `ServicesResolved=true` on one.)
    func refreshResolvedDevice(_ device: ObjectPath) async -> Bool {
        if read({ Self.probe(of: device, in: $0) }) == nil {
            _ = try? await connection.call(
                destination: BlueZService.busName, path: device, interface: .properties, member: BlueZMethod.getAll,
                arguments: [.string(BlueZInterface.device1.rawValue)], timeout: callTimeout)
        }
        return await refreshMTU(of: device)
    }

    /// Reads the link's `MTU` from one characteristic of `device` and stores it on all of them
    /// (Q10: bluetoothd drops it at a disconnection and restores it at the next link without a
    /// signal; one value per link). Returns whether bluetoothd answered: with the value, or
    /// with an error when it has no `MTU` (before 5.62), when the mirror's fallback stands.
    func refreshMTU(of device: ObjectPath) async -> Bool {
        guard let probe = read({ Self.probe(of: device, in: $0) }) else { return false }
        let mtuKey = GattCharacteristicProperties.Key.mtu
        let reply: DBusMessage
        do {
            reply = try await connection.call(
                destination: BlueZService.busName, path: probe.path, interface: .properties, member: BlueZMethod.get,
                arguments: [.string(BlueZInterface.gattCharacteristic1.rawValue), .string(mtuKey)],
                timeout: callTimeout)
        } catch {
            return error.code == .remote
        }
        guard case .variant(.uint16(let mtu))? = reply.body.first else { return true }
        state.withLock { state in
            // The usual reconnection: the same MTU on the same objects, stored by the last one.
            if probe.mtu == .uint16(mtu), state.tree.gattLayoutVersion(of: device) == probe.layoutVersion { return }
            // Listed after the reply: every characteristic the barrier brought gets the value.
            for path in state.tree.unorderedCharacteristicPaths(ofDevice: device)
            where state.tree.interfaces(at: path)?[BlueZInterface.gattCharacteristic1]?[mtuKey] != .uint16(mtu) {
                _ = state.tree.apply(
                    .propertiesChanged(
                        path, BlueZInterface.gattCharacteristic1, changed: [mtuKey: .uint16(mtu)], invalidated: []))
            }
        }
        return true
    }

    /// A characteristic of `device` to read the MTU from, the MTU the mirror holds for it, and
    /// the layout version then.
    private static func probe(
        of device: ObjectPath, in tree: BlueZObjectTree
    ) -> (path: ObjectPath, mtu: DBusValue?, layoutVersion: UInt64)? {
        // The first by path, as the traces of the real bluetoothd show it.
        guard let path = tree.unorderedCharacteristicPaths(ofDevice: device).min() else { return nil }
        return (
            path, tree.interfaces(at: path)?[BlueZInterface.gattCharacteristic1]?[GattCharacteristicProperties.Key.mtu],
            tree.gattLayoutVersion(of: device)
        )
    }

    // MARK: Re-reading properties

    /// Re-reads the properties of `interface` at `path` and applies those that differ from the
    /// mirror, for a mirror that missed a change bluetoothd made without a signal. Signals
    /// sent after the reply win over it (``PropertyRefreshes``). Returns false, at once, when
    /// the same re-read is already under way.
    @discardableResult
    func refreshProperties(at path: ObjectPath, interface: InterfaceName) async -> Bool {
        let key = PropertyRefreshes.Key(path: path, interface: interface)
        guard state.withLock({ $0.refreshes.begin(key) }) else { return false }
        let reply: DBusMessage
        let values: [String: DBusValue]
        do {
            reply = try await connection.call(
                destination: BlueZService.busName, path: path, interface: .properties, member: BlueZMethod.getAll,
                arguments: [.string(interface.rawValue)], timeout: callTimeout)
            values = try ObjectManagerCoding.decodeProperties(reply.body.first ?? .array(.byte, []))
        } catch {
            state.withLock { $0.refreshes.cancel(key) }
            logger.log(.debug, "re-reading \(interface.rawValue) at \(path) failed: \(error)")
            return true
        }
        // Filtered and applied under one lock: no signal can slip in between.
        let (changed, changes) = state.withLock { state -> ([String: DBusValue], [ObjectTreeChange]) in
            let kept = state.refreshes.finish(key, values: values, serial: reply.serial)
            guard let held = state.tree.interfaces(at: path)?[interface] else { return ([:], []) }
            let changed = kept.filter { held[$0.key] != $0.value }
            guard !changed.isEmpty else { return ([:], []) }
            return (changed, state.tree.apply(.propertiesChanged(path, interface, changed: changed, invalidated: [])))
        }
        guard !changed.isEmpty else { return true }
        // Either bluetoothd changed them silently or their signals are still on the way.
        logger.log(.info, "re-read \(path): \(changed.keys.sorted().joined(separator: ", ")) differed from the mirror")
        let event = ObjectTreeEvent.propertiesChanged(path, interface, changed: changed, invalidated: [])
        broadcast(.tree(event, changes, serial: reply.serial))
        return true
    }

    /// bluetoothd 5.66 marks a device connected without `Connected=true` when the ATT socket
    /// of its Connect is up before the kernel's connection event reaches it (src/device.c:
    /// `att_connect_cb` sets the state, `device_add_connection` then finds it set and says
    /// nothing). `ServicesResolved=true` follows only on a connected device, so the mirror
    /// holding it on a device it thinks disconnected is that case: re-read the device.
    private func repairConnected(after event: ObjectTreeEvent) {
        guard case .propertiesChanged(let path, BlueZInterface.device1, let changed, _) = event,
            changed[DeviceProperties.Key.servicesResolved]?.isBoolean(true) == true,
            // The flag alone, read where it is stored: this runs for every change of a device.
            read({ $0.properties(at: path, interface: BlueZInterface.device1) })?[DeviceProperties.Key.connected]?
                .isBoolean(false) == true
        else { return }
        Task(executorPreference: connection.executor) { [weak self] in
            await self?.refreshProperties(at: path, interface: BlueZInterface.device1)
        }
    }

    private func apply(_ event: ObjectTreeEvent, serial: UInt32 = 0) {
        let (applied, changes) = state.withLock { state in
            let applied = state.refreshes.filter(event, serial: serial)
            return (applied, state.tree.apply(applied))
        }
        if case .reset = event { state.withLock { $0.owner = nil } }
        broadcast(.tree(applied, changes, serial: serial))
    }

    private func broadcast(_ event: SessionEvent) {
        // Listeners' buffers take the event under the lock (a buffer never calls back into the
        // session), so no list of them is copied per event; observers run after it, since they
        // read the mirror.
        let (devices, subtrees) = state.withLock { state in
            for listener in state.listeners.values
            where listener.prefix.map({ listener.exact ? event.concerns(exactly: $0) : event.concerns($0) }) ?? true {
                listener.buffer.yield(event)
            }
            return (Self.deviceObservers(of: event, in: state), state.subtreeObservers)
        }
        switch devices {
        case .none: break
        case .one(let observer): observer.sessionEvent(event)
        case .many(let observers): for observer in observers { observer.sessionEvent(event) }
        }
        for entry in subtrees where event.concerns(entry.prefix) { entry.observer.sessionEvent(event) }
    }

    /// The device observers an event concerns: one, for nearly every event, without building
    /// a list.
    private enum DeviceObservers {
        case none
        case one(any SessionObserver)
        case many([any SessionObserver])

        mutating func add(_ observer: any SessionObserver) {
            switch self {
            case .none: self = .one(observer)
            case .one(let first): if first !== observer { self = .many([first, observer]) }
            case .many(var all):
                guard !all.contains(where: { $0 === observer }) else { return }
                all.append(observer)
                self = .many(all)
            }
        }
    }

    /// The observers of the devices `event` concerns: those of the devices it changed (or
    /// whose signal it is), or all of them when bluetoothd or the bus comes or goes. Found by
    /// path, with one look-up per device the event touches.
    private static func deviceObservers(of event: SessionEvent, in state: State) -> DeviceObservers {
        guard !state.observers.isEmpty else { return .none }
        var found = DeviceObservers.none
        switch event {
        case .daemonGone, .daemonBack:
            for entry in state.observers.values { if let observer = entry.observer { found.add(observer) } }
        case .signal(let message):
            if let path = message.path, let observer = observer(of: path, in: state) { found.add(observer) }
        case .tree(_, let changes, _):
            var previous: ObjectPath?
            for change in changes where change.path != previous {
                previous = change.path
                if let observer = observer(of: change.path, in: state) { found.add(observer) }
            }
        }
        return found
    }

    /// The observer of the device that `path` is or lies below: the device's own changes are
    /// found with one look-up of their path; only an object below it (a service, a
    /// characteristic) costs the device's path to be cut out and built.
    private static func observer(of path: ObjectPath, in state: State) -> (any SessionObserver)? {
        if let entry = state.observers[path] { return entry.observer }
        return BlueZPath.device(below: path).flatMap { state.observers[$0]?.observer }
    }

    // MARK: Listening and reading

    /// Events from now on, optionally only those about `prefix` and below. Registering is
    /// synchronous, so a caller that listens and then reads the tree misses nothing.
    func events(under prefix: ObjectPath? = nil) -> SessionEvents {
        listen(prefix: prefix, exact: false)
    }

    /// Events about `path` itself (its properties and interfaces, and bluetoothd coming and
    /// going), not about the objects below it: a central follows its adapter without being
    /// woken by every device an advertisement adds.
    func events(at path: ObjectPath) -> SessionEvents {
        listen(prefix: path, exact: true)
    }

    private func listen(prefix: ObjectPath?, exact: Bool) -> SessionEvents {
        let buffer = EventBuffer<SessionEvent>(capacity: nil)
        let id = state.withLock { state -> UInt64 in
            let id = state.nextListener
            state.nextListener += 1
            return id
        }
        diagnostics.track(buffer) { [weak self] in
            self?.state.withLock { _ = $0.listeners.removeValue(forKey: id) }
        }
        let connectionClosed = connection.isClosed
        let closed = state.withLock { state -> Bool in
            let ended = state.closed || (state.busLost && connectionClosed)
            if !ended { state.listeners[id] = Listener(prefix: prefix, exact: exact, buffer: buffer) }
            return ended
        }
        // A closed session (or one whose bus went) has no listeners left to end: this one ends now.
        if closed { buffer.finish() }
        return SessionEvents(consumer: EventConsumer(buffer))
    }

    /// Runs `body` on the mirrored tree under the session's lock, so that no copy outlives it
    /// (a copy still held when the I/O thread applies the next signal would make that signal
    /// copy the whole tree). `body` must be quick and must not call back into the session.
    func read<Result, Failure: Error>(_ body: (BlueZObjectTree) throws(Failure) -> Result) throws(Failure) -> Result {
        try state.withLock { state throws(Failure) in try body(state.tree) }
    }

    /// The mirrored tree (a copy; for a look-up made on every event, use ``read(_:)``).
    var tree: BlueZObjectTree { state.withLock { $0.tree } }

    /// bluetoothd's unique name now, if it is on the bus.
    var owner: BusName? { state.withLock { $0.owner } }

    /// Whether bluetoothd is on the bus now, was ever seen, and refused us.
    var daemonStatus: (present: Bool, everSeen: Bool, accessDenied: Bool) {
        state.withLock { ($0.owner != nil, $0.everSeenOwner, $0.accessDenied) }
    }

    // MARK: Calls

    /// Calls bluetoothd, traced at `trace` level, errors mapped to ``BLEError``.
    func call(
        _ path: ObjectPath, _ interface: InterfaceName, _ member: MemberName, _ arguments: [DBusValue] = [],
        timeout: Duration? = nil
    ) async throws(BLEError) -> DBusMessage {
        guard daemonStatus.present else { throw unavailable }
        logger.log(.trace, "\(path) \(interface.rawValue).\(member.rawValue) \(describe(arguments))")
        do {
            let reply = try await connection.call(
                destination: BlueZService.busName, path: path, interface: interface, member: member,
                arguments: arguments, timeout: timeout ?? callTimeout)
            logger.log(.trace, "\(path) \(member.rawValue) -> \(describe(reply.body))")
            return reply
        } catch {
            logger.log(.trace, "\(path) \(member.rawValue) -> \(error)")
            throw BLEError(error)
        }
    }

    /// Sends a call to bluetoothd and hands the outcome to `completion` on the I/O thread (or
    /// at once, when bluetoothd is away), traced and mapped as ``call(_:_:_:_:timeout:)``.
    func startCall(
        _ path: ObjectPath, _ interface: InterfaceName, _ member: MemberName, _ arguments: [DBusValue],
        timeout: Duration, completion: @escaping @Sendable (Result<DBusMessage, BLEError>) -> Void
    ) {
        guard daemonStatus.present else { return completion(.failure(unavailable)) }
        let logger = self.logger
        logger.log(.trace, "\(path) \(interface.rawValue).\(member.rawValue) \(describe(arguments))")
        let message = DBusMessage(
            kind: .methodCall, path: path, interface: interface, member: member, destination: BlueZService.busName,
            body: arguments)
        connection.startCall(message, timeout: timeout) { [self] result in
            switch result {
            case .success(let reply):
                logger.log(.trace, "\(path) \(member.rawValue) -> \(describe(reply.body))")
                completion(.success(reply))
            case .failure(let error):
                logger.log(.trace, "\(path) \(member.rawValue) -> \(error)")
                completion(.failure(BLEError(error)))
            }
        }
    }

    private func describe(_ values: [DBusValue]) -> String {
        values.map { value -> String in
            if case .bytes(let data) = value { return logger.payload(Array(data)) }
            return logger.includesPayloads ? "\(value)" : value.type.signature
        }.joined(separator: ", ")
    }
}
