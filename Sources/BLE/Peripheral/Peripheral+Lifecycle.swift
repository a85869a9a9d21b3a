import BlueZ
import DBus

/// The shell around ``ConnectionLifecycle``: callers wait on their own continuation, replies
/// and wake-ups come back to the actor as events, and the machine's actions run here.
extension Peripheral {
    typealias LinkWaiter = CheckedContinuation<(Result<Void, BLEError>, LinkFollowUp), Never>
    typealias Lifecycle = ConnectionLifecycle<LinkWaiter>

    /// Deadlines at least this long leave room for a second try after a stalled one.
    static let retryableConnectTimeout: Duration = .seconds(10)

    // MARK: Connecting

    /// Brings the link up and waits for resolution, within `timeout`. A connect asked by the
    /// app takes over from a reconnection in progress; the reconnection itself passes
    /// `reconnecting`.
    func connectLink(timeout: Duration, reconnecting: Bool = false) async throws(BLEError) {
        if connectionState == .connected, mirroredDevice().resolved { return }
        follow()
        // Registered before the link is up: a peripheral may ask for security at once, and
        // bluetoothd then asks its default agent. A failure shows at pair(). Within the
        // connect's deadline: a bluetoothd that does not answer must not hold the connect
        // past it.
        let start = ContinuousClock.now
        if let agent = central?.pairingAgent, !agent.isRegistered {
            try? await agent.register(timeout: timeout)
        }
        let remaining = timeout - (ContinuousClock.now - start)
        let id = nextLinkWaiter
        nextLinkWaiter += 1
        let site = session.diagnostics.willSuspend()
        let (result, followUp) = await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: LinkWaiter) in
                runLink(
                    lifecycle.connect(
                        id, waiter, timeout: remaining, retryable: timeout >= Self.retryableConnectTimeout,
                        reconnecting: reconnecting, device: mirroredDevice(withLayout: true), now: .now))
            }
        } onCancel: {
            Task(executorPreference: session.connection.executor) { await self.cancelLinkWait(id) }
        }
        session.diagnostics.didResume(site)
        switch result {
        case .success:
            // Each step only when it has something to do: an async call costs its frame and
            // its bookkeeping even when it returns at once, on every connection.
            if followUp == .rearm {
                if !gatt.sessions.isEmpty { await rearmSubscriptions() }
                if !gatt.acquired.isEmpty { await reacquireChannels() }
            }
            central?.restoration?.connected(self.id, policy: lifecycle.policy)
            if !restoredSubscriptions.isEmpty { await subscribeAgainAfterRestoredLink() }
        case .failure(let error):
            if followUp == .disconnectUnlessDaemonLeaves, await Self.daemonLeaves(session) {
                // BlueZ cancelled the Connect though this process did not ask: bluetoothd
                // exiting does that (br-connection-canceled), and its leaving the bus follows.
                throw BLEError.bluetoothGone
            }
            if followUp != .none {
                // BlueZ cancels a pending Connect on Disconnect; leave no half-open link.
                // Bounded by the call timeout too, so a connect overruns its deadline by one
                // unanswered call at most.
                await sendDisconnect(timeout: min(session.callTimeout, .seconds(5)))
            }
            throw error
        }
    }

    /// How many callers wait for the connect attempt under way (for tests).
    var connectWaiterCount: Int { lifecycle.connectWaiterCount }

    private func cancelLinkWait(_ id: UInt64) {
        runLink(lifecycle.cancel(id))
        runLink(lifecycle.cancelDisconnect(id, device: mirroredDevice()))
    }

    /// Whether bluetoothd is gone or leaves the bus within a moment.
    private static func daemonLeaves(_ session: BlueZSession) async -> Bool {
        guard session.daemonStatus.present else { return true }
        let events = session.events(at: .root)
        defer { events.cancel() }
        guard session.daemonStatus.present else { return true }
        let left = try? await withDeadline(
            .milliseconds(250), what: "waiting for bluetoothd to leave", timedBy: session.connection
        ) {
            () throws(BLEError) -> Bool in
            for await event in events { if case .daemonGone = event { return true } }
            return false
        }
        return left ?? false
    }

    /// `Device1.Disconnect`, its outcome ignored; sent even from a cancelled task.
    private func sendDisconnect(timeout: Duration) async {
        let session = self.session
        let devicePath = self.devicePath
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            session.startCall(devicePath, BlueZInterface.device1, BlueZMethod.disconnect, [], timeout: timeout) { _ in
                done.resume()
            }
        }
    }

    // MARK: Disconnecting

    /// Closes the link and waits until it is down. Succeeds at once when not connected; a
    /// connect under way fails with ``BLEError/Code/cancelled``. Pending operations fail with
    /// ``BLEError/Code/disconnected``. When bluetoothd refuses or does not answer, the error is
    /// thrown and the state goes back to what the link is: a peripheral still linked stays
    /// connected and usable.
    public func disconnect() async throws(BLEError) {
        // The app let it go: a later process does not take it over.
        central?.restoration?.disconnected(self.id)
        restoredSubscriptions = []
        let id = nextLinkWaiter
        nextLinkWaiter += 1
        let site = session.diagnostics.willSuspend()
        let (result, _) = await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: LinkWaiter) in
                runLink(lifecycle.disconnect(id, waiter))
            }
        } onCancel: {
            Task(executorPreference: session.connection.executor) { await self.cancelLinkWait(id) }
        }
        session.diagnostics.didResume(site)
        try result.get()
    }

    // MARK: The mirror's view

    /// The device as the mirror holds it now: the two flags, read where they are stored, and
    /// the version of its GATT objects (this runs for every change of the device while it
    /// connects). The machine compares versions only when the device is connected and resolved,
    /// and at the start of an attempt (`withLayout`): at other times the version is not looked up.
    func mirroredDevice(withLayout: Bool = false) -> Lifecycle.Device {
        let devicePath = self.devicePath
        return session.read { tree in
            guard let properties = tree.properties(at: devicePath, interface: BlueZInterface.device1) else {
                return Lifecycle.Device(present: false)
            }
            let connected = properties[DeviceProperties.Key.connected]?.isBoolean(true) == true
            let resolved = properties[DeviceProperties.Key.servicesResolved]?.isBoolean(true) == true
            let layout =
                (withLayout || (connected && resolved)) && tree.holdsServices(of: devicePath)
                ? tree.gattLayoutVersion(of: devicePath) : nil
            return Lifecycle.Device(present: true, connected: connected, resolved: resolved, layout: layout)
        }
    }

    // MARK: Running the machine

    /// Runs the machine's actions; the state follows its phase first. What the actions bring
    /// back at once (a call failing before it is sent) is taken after them, in order.
    func runLink(_ actions: consuming [Lifecycle.Action]) {
        let outermost = !isRunningLinkActions
        isRunningLinkActions = true
        connectionState = lifecycle.phase
        // Each action is moved out and handed over, not copied (a copy retains its
        // continuation and its error): a few times per change of the device.
        actions.reverse()
        while let action = actions.popLast() { perform(action) }
        // A connect that ended leaves its deadline set for up to its whole timeout otherwise.
        if !linkTimers.isEmpty {
            for timer in lifecycle.unneeded(among: linkTimers.keys) {
                if let id = linkTimers.removeValue(forKey: timer) { session.connection.cancelScheduled(id) }
            }
        }
        guard outermost else { return }
        while !deferredEntries.isEmpty {
            let work = deferredEntries.removeFirst()
            work(self)
        }
        isRunningLinkActions = false
    }

    private func perform(_ action: consuming Lifecycle.Action) {
        let session = self.session
        let devicePath = self.devicePath
        let executor = session.connection.executor
        switch action {
        case .sendConnect(let call, let deadline):
            if let central, !session.read({ $0.contains(devicePath, implementing: BlueZInterface.device1) }) {
                // bluetoothd holds no object for the device: it forgets an unbonded one when it
                // restarts (a gateway's reboot, before restoration reconnects) and a while after
                // it disconnects. A targeted scan finds it first, as connect's first time does.
                let address = id.bluetoothAddress
                Task(executorPreference: executor) { [weak self] in
                    let found = try? await central.findDevice(address, timeout: deadline - .now)
                    guard let self else { return }
                    guard let found, found.path != nil else {
                        return report {
                            $0.connectReplied(call: call, .failure(Self.notFoundByScan), device: $1)
                        }
                    }
                    // The attempt may have ended meanwhile (its deadline, a disconnect): a
                    // Connect sent now would open a link nobody waits for.
                    enter { peripheral in
                        guard peripheral.lifecycle.awaitsConnect(call: call) else { return }
                        peripheral.sendConnect(call, deadline: deadline, holding: found.scan)
                    }
                }
            } else {
                sendConnect(call, deadline: deadline, holding: nil)
            }
        case .sendDisconnect(let call):
            session.startCall(
                devicePath, BlueZInterface.device1, BlueZMethod.disconnect, [], timeout: session.callTimeout
            ) { [weak self] result in
                self?.report {
                    $0.disconnectReplied(
                        call: call, result.map { _ in () }, device: $1, now: .now, settleLimit: BlueZSession.settleLimit
                    )
                }
            }
        case .restartLink(let call):
            session.startCall(devicePath, BlueZInterface.device1, BlueZMethod.disconnect, [], timeout: .seconds(5)) {
                [weak self] _ in
                self?.report { $0.restartReplied(call: call, device: $1, now: .now) }
            }
        case .refreshDevice:
            // What the re-read changes comes back as the device's change.
            Task(executorPreference: executor) {
                _ = await session.refreshProperties(at: devicePath, interface: BlueZInterface.device1)
            }
        case .refreshResolved(let attempt):
            let link = linkMTU.link
            Task(executorPreference: executor) { [weak self, linkMTU] in
                if await session.refreshResolvedDevice(devicePath) { linkMTU.confirm(link: link) }
                self?.report { machine, _ in machine.refreshFinished(attempt: attempt) }
            }
        case .schedule(let timer, let due):
            // Timed by the bus connection's loop: no timer thread wakes for it.
            linkTimers[timer] = session.connection.schedule(after: due - .now) { [weak self] in
                self?.report { machine, _ in machine.timerFired(timer, due: due, now: .now) }
            }
        case .resume(let waiter, let result, let followUp):
            waiter.resume(returning: (result, followUp))
        case .failOperations(let reason):
            linkDownHook(reason)
        case .announce(let event):
            eventBroadcast.yield(event)
            // When the resolution read this link's MTU, it is announced after the link, if it is
            // new. The usual reconnection read nothing (the mirror still holds the last link's
            // value): its MTU is announced when first read (``readLinkMTUIfNeeded()``).
            if event == .connected, linkMTU.isCurrent { announceMTUIfChanged() }
        case .scheduleReconnect(let attempt):
            let delay = lifecycle.policy.delay(attempt: attempt)
            eventBroadcast.yield(.reconnecting(attempt: attempt, after: delay))
            reconnectDelay?.cancel()
            reconnectDelay = Task(executorPreference: executor) { [weak self] in
                do { try await Task.sleep(for: delay) } catch { return }
                self?.report { machine, _ in machine.reconnectDue(attempt: attempt) }
            }
        case .reconnect(let attempt):
            reconnectDelay = nil
            let timeout = central?.options.connectTimeout ?? .seconds(30)
            Task(executorPreference: executor) { [weak self] in
                guard let self else { return }
                let result: Result<Void, BLEError>
                do throws(BLEError) {
                    try await self.connectLink(timeout: timeout, reconnecting: true)
                    result = .success(())
                } catch {
                    result = .failure(error)
                }
                self.report { machine, _ in machine.reconnectFinished(attempt: attempt, result) }
            }
        case .stopReconnecting:
            reconnectDelay?.cancel()
            reconnectDelay = nil
        case .stalled:
            let device = mirroredDevice()
            session.logger.log(
                .info, "the link did not resolve; connecting once more",
                metadata: [
                    "device": devicePath.rawValue, "connected": "\(device.connected)",
                    "servicesResolved": "\(device.resolved)",
                ])
        }
    }

    typealias LifecycleEvent = @Sendable (inout Lifecycle, Lifecycle.Device) -> [Lifecycle.Action]

    /// Reports an event from the I/O thread (a reply, a wake-up) to the actor, which feeds it
    /// with the device as the mirror holds it then.
    /// Sends `Device1.Connect` for attempt `call`; `scan` (a targeted scan that found the
    /// device) runs until it is answered: stopping discovery first would let bluetoothd drop
    /// the device it just created.
    private nonisolated func sendConnect(
        _ call: UInt64, deadline: MachineInstant, holding scan: ScanHandle?
    ) {
        session.startCall(
            devicePath, BlueZInterface.device1, BlueZMethod.connect, [], timeout: deadline - .now
        ) { [weak self] result in
            withExtendedLifetime(scan) {}
            self?.report { $0.connectReplied(call: call, result.map { _ in () }, device: $1) }
        }
    }

    private static var notFoundByScan: BLEError {
        BLEError(.notFound, message: "bluetoothd no longer knows the peripheral and a scan did not find it")
    }

    private nonisolated func report(_ event: @escaping LifecycleEvent) {
        enter(with: event) { $0.feed($1) }
    }

    private func feed(_ event: LifecycleEvent) {
        let device = mirroredDevice()
        runLink(event(&lifecycle, device))
    }
}
