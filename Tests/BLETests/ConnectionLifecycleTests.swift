import Testing

@testable import BLE

/// Transcripts of ``ConnectionLifecycle`` (a peripheral's link), without a bus: events in,
/// actions out. Waiters are strings; time is counted from `t0`.
@Suite("Connection lifecycle transcripts")
struct ConnectionLifecycleTests {
    typealias Lifecycle = ConnectionLifecycle<String>
    typealias Device = Lifecycle.Device

    static let t0 = MachineInstant.now
    static func at(_ offset: Duration) -> MachineInstant { t0 + offset }

    static let absent = Device(present: false)
    static let down = Device()
    static let linked = Device(connected: true)
    static let resolved = Device(connected: true, resolved: true)
    static let backoff = ReconnectPolicy.exponentialBackoff(maximumAttempts: 2)

    static func time(_ instant: MachineInstant) -> String {
        let offset = instant - t0
        return offset.components.attoseconds == 0 ? "\(offset.components.seconds)s" : "\(offset)"
    }

    static func describe(_ actions: [Lifecycle.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .sendConnect(let call, let deadline): "connect #\(call) until \(time(deadline))"
            case .sendDisconnect(let call): "disconnect #\(call)"
            case .restartLink(let call): "restart #\(call)"
            case .refreshDevice: "refresh device"
            case .refreshResolved(let attempt): "refresh resolved @\(attempt)"
            case .schedule(.deadline(let waiter), let due): "deadline of \(waiter) at \(time(due))"
            case .schedule(.stall(let attempt), let due): "stall of @\(attempt) at \(time(due))"
            case .schedule(.settle(let call), let due): "settle #\(call) at \(time(due))"
            case .resume(let waiter, .success, let followUp): "resume \(waiter) ok \(followUp)"
            case .resume(let waiter, .failure(let error), let followUp): "resume \(waiter) \(error.code) \(followUp)"
            case .failOperations(let reason): "fail operations (\(reason))"
            case .announce(let event): "announce \(event)"
            case .scheduleReconnect(let attempt): "schedule reconnect \(attempt)"
            case .reconnect(let attempt): "reconnect \(attempt)"
            case .stopReconnecting: "stop reconnecting"
            case .stalled: "stalled"
            }
        }
    }

    /// A link brought up by "A" with a 5 s deadline (no second try): Connect #2 of attempt @1.
    static func connected(policy: ReconnectPolicy = .never) -> Lifecycle {
        var link = Lifecycle(policy: policy)
        _ = link.connect(1, "A", timeout: .seconds(5), retryable: false, reconnecting: false, device: down, now: t0)
        _ = link.connectReplied(call: 2, .success(()), device: linked)
        _ = link.deviceChanged(resolved, daemonPresent: true)
        _ = link.refreshFinished(attempt: 1)
        return link
    }

    // MARK: Connecting

    @Test("Connect, its reply, then resolution: the refresh is the last step; the first caller re-arms")
    func connectThenResolve() {
        var link = Lifecycle(policy: .never)
        #expect(
            Self.describe(
                link.connect(
                    1, "A", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.down, now: Self.t0
                ))
                == ["connect #2 until 5s", "deadline of 1 at 5s"])
        #expect(link.phase == .connecting)
        #expect(Self.describe(link.connectReplied(call: 2, .success(()), device: Self.linked)) == [])
        #expect(Self.describe(link.deviceChanged(Self.resolved, daemonPresent: true)) == ["refresh resolved @1"])
        #expect(link.phase == .connecting, "connected only once the refresh is done")
        #expect(Self.describe(link.refreshFinished(attempt: 1)) == ["announce connected", "resume A ok rearm"])
        #expect(link.phase == .connected)
        #expect(
            Self.describe(link.timerFired(.deadline(waiter: 1), due: Self.at(.seconds(5)), now: Self.at(.seconds(5))))
                == [])
    }

    @Test("a Connect delayed by a scan for a forgotten device is sent only while its attempt still awaits it")
    func delayedConnectStillAwaited() {
        var link = Lifecycle(policy: .never)
        _ = link.connect(
            1, "A", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.absent, now: Self.t0)
        #expect(link.awaitsConnect(call: 2), "sent after the scan finds the device")
        #expect(!link.awaitsConnect(call: 3), "not a call of this attempt")
        _ = link.timerFired(.deadline(waiter: 1), due: Self.at(.seconds(5)), now: Self.at(.seconds(5)))
        #expect(!link.awaitsConnect(call: 2), "the deadline ended the attempt: no Connect goes out late")

        var answered = Lifecycle(policy: .never)
        _ = answered.connect(
            1, "A", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.down, now: Self.t0)
        _ = answered.connectReplied(call: 2, .success(()), device: Self.linked)
        #expect(!answered.awaitsConnect(call: 2), "answered already")
    }

    @Test("resolution before the Connect reply (Q2, under load): the late reply changes nothing")
    func resolvedBeforeReply() {
        var link = Lifecycle(policy: .never)
        _ = link.connect(
            1, "A", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.down, now: Self.t0)
        #expect(Self.describe(link.deviceChanged(Self.resolved, daemonPresent: true)) == ["refresh resolved @1"])
        #expect(Self.describe(link.connectReplied(call: 2, .success(()), device: Self.resolved)) == [])
        #expect(Self.describe(link.refreshFinished(attempt: 1)) == ["announce connected", "resume A ok rearm"])
    }

    @Test("Connect answered, Connected never signalled (5.66): the device is re-read, and its resolution ends it")
    func answeredWithoutConnected() {
        var link = Lifecycle(policy: .never)
        _ = link.connect(
            1, "A", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.down, now: Self.t0)
        #expect(Self.describe(link.connectReplied(call: 2, .success(()), device: Self.down)) == ["refresh device"])
        #expect(Self.describe(link.deviceChanged(Self.resolved, daemonPresent: true)) == ["refresh resolved @1"])
    }

    @Test("a link that is already resolved (opened elsewhere) needs no Connect")
    func alreadyResolved() {
        var link = Lifecycle(policy: .never)
        #expect(
            Self.describe(
                link.connect(
                    1, "A", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.resolved,
                    now: Self.t0))
                == ["deadline of 1 at 5s", "refresh resolved @1"])
    }

    @Test("connecting a connected, resolved link returns at once")
    func connectWhenConnected() {
        var link = Self.connected()
        #expect(
            Self.describe(
                link.connect(
                    3, "B", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.resolved,
                    now: Self.t0))
                == ["resume B ok none"])
    }

    @Test("a refused Connect fails every caller; only the first follows up, as the error asks")
    func refused() {
        var link = Lifecycle(policy: .never)
        _ = link.connect(
            1, "A", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.down, now: Self.t0)
        _ = link.connect(
            3, "B", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.down, now: Self.t0)
        let failed = BLEError(.connectionFailed, message: "le-connection-abort-by-local")
        #expect(
            Self.describe(link.connectReplied(call: 2, .failure(failed), device: Self.down))
                == ["resume A connectionFailed none", "resume B connectionFailed none"])
        #expect(link.phase == .disconnected)
    }

    @Test("BlueZ cancelling the Connect itself: the caller checks whether bluetoothd leaves")
    func cancelledByBlueZ() {
        var link = Lifecycle(policy: .never)
        _ = link.connect(
            1, "A", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.down, now: Self.t0)
        let cancelled = BLEError(.cancelled, message: "br-connection-canceled", dbusErrorName: "org.bluez.Error.Failed")
        #expect(
            Self.describe(link.connectReplied(call: 2, .failure(cancelled), device: Self.down))
                == ["resume A cancelled disconnectUnlessDaemonLeaves"])
    }

    @Test("a caller's deadline ends its wait; the last caller leaving abandons the attempt with Disconnect")
    func deadline() {
        var link = Lifecycle(policy: .never)
        _ = link.connect(
            1, "A", timeout: .seconds(2), retryable: false, reconnecting: false, device: Self.down, now: Self.t0)
        #expect(
            Self.describe(
                link.connect(
                    3, "B", timeout: .seconds(4), retryable: false, reconnecting: false, device: Self.down, now: Self.t0
                ))
                == ["deadline of 3 at 4s"], "it joins the attempt")
        #expect(link.connectWaiterCount == 2)
        #expect(
            Self.describe(
                link.timerFired(.deadline(waiter: 1), due: Self.at(.seconds(2)), now: Self.at(.milliseconds(1_500))))
                == [], "a wake-up before its time (the bus closing) is ignored")
        #expect(
            Self.describe(link.timerFired(.deadline(waiter: 1), due: Self.at(.seconds(2)), now: Self.at(.seconds(2))))
                == ["resume A timeout none"])
        #expect(link.phase == .connecting, "B still waits")
        #expect(
            Self.describe(link.timerFired(.deadline(waiter: 3), due: Self.at(.seconds(4)), now: Self.at(.seconds(4))))
                == ["resume B timeout disconnect"])
        #expect(link.phase == .disconnected)
        #expect(Self.describe(link.connectReplied(call: 2, .success(()), device: Self.linked)) == [], "abandoned")
    }

    @Test("one caller cancelled leaves at once; the attempt goes on for the other")
    func cancelOne() {
        var link = Lifecycle(policy: .never)
        _ = link.connect(
            1, "A", timeout: .seconds(9), retryable: false, reconnecting: false, device: Self.down, now: Self.t0)
        _ = link.connect(
            3, "B", timeout: .seconds(9), retryable: false, reconnecting: false, device: Self.down, now: Self.t0)
        #expect(Self.describe(link.cancel(1)) == ["resume A cancelled none"])
        #expect(Self.describe(link.cancel(1)) == [], "resumed once")
        _ = link.deviceChanged(Self.resolved, daemonPresent: true)
        #expect(Self.describe(link.refreshFinished(attempt: 1)) == ["announce connected", "resume B ok rearm"])
    }

    @Test("a stalled attempt is disconnected and made once more within the first deadline")
    func stall() {
        var link = Lifecycle(policy: .never)
        #expect(
            Self.describe(
                link.connect(
                    1, "A", timeout: .seconds(30), retryable: true, reconnecting: false, device: Self.down, now: Self.t0
                ))
                == ["connect #2 until 30s", "deadline of 1 at 30s", "stall of @1 at 15s"])
        #expect(
            Self.describe(link.timerFired(.stall(attempt: 1), due: Self.at(.seconds(15)), now: Self.at(.seconds(15))))
                == ["stalled", "restart #3"])
        #expect(
            Self.describe(link.connectReplied(call: 2, .success(()), device: Self.linked)) == [],
            "the first try is over")
        #expect(
            Self.describe(link.restartReplied(call: 3, device: Self.down, now: Self.at(.seconds(16))))
                == ["connect #4 until 30s"])
        #expect(
            Self.describe(link.timerFired(.stall(attempt: 1), due: Self.at(.seconds(15)), now: Self.at(.seconds(20))))
                == [], "one second try at most")
        _ = link.deviceChanged(Self.resolved, daemonPresent: true)
        #expect(Self.describe(link.refreshFinished(attempt: 1)) == ["announce connected", "resume A ok rearm"])
    }

    @Test("a restart answered after the deadline fails the attempt")
    func stallPastDeadline() {
        var link = Lifecycle(policy: .never)
        _ = link.connect(
            1, "A", timeout: .seconds(10), retryable: true, reconnecting: false, device: Self.down, now: Self.t0)
        _ = link.timerFired(.stall(attempt: 1), due: Self.at(.seconds(5)), now: Self.at(.seconds(5)))
        #expect(
            Self.describe(link.restartReplied(call: 3, device: Self.down, now: Self.at(.seconds(10))))
                == ["resume A timeout disconnect"])
    }

    @Test("the device vanishing while connecting: notFound, or bluetoothUnavailable when bluetoothd left")
    func vanished() {
        var link = Lifecycle(policy: .never)
        _ = link.connect(
            1, "A", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.down, now: Self.t0)
        #expect(Self.describe(link.deviceChanged(Self.absent, daemonPresent: true)) == ["resume A notFound none"])
        _ = link.connect(
            3, "B", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.down, now: Self.t0)
        #expect(
            Self.describe(link.deviceChanged(Self.absent, daemonPresent: false)) == [
                "resume B bluetoothUnavailable none"
            ])
    }

    @Test("bluetoothd leaving fails an attempt, and ends a link with bluetoothUnavailable")
    func daemonGone() {
        var connecting = Lifecycle(policy: .never)
        _ = connecting.connect(
            1, "A", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.down, now: Self.t0)
        #expect(Self.describe(connecting.daemonGone()) == ["resume A bluetoothUnavailable none"])
        var link = Self.connected(policy: Self.backoff)
        #expect(
            Self.describe(link.daemonGone())
                == [
                    "fail operations (bluetoothUnavailable)", "announce disconnected(bluetoothUnavailable)",
                    "schedule reconnect 1",
                ])
    }

    // MARK: Link loss and reconnection

    @Test("a loss fails operations and, with a policy, reconnects with backoff until attempts run out")
    func reconnectBackoff() {
        var link = Self.connected(policy: Self.backoff)
        #expect(
            Self.describe(link.linkDown(.remote, announce: true))
                == ["fail operations (remote)", "announce disconnected(remote)", "schedule reconnect 1"])
        #expect(link.phase == .disconnected)
        #expect(Self.describe(link.reconnectDue(attempt: 1)) == ["reconnect 1"])
        let busy = BLEError(.connectionFailed, message: "le-connection-abort-by-local")
        #expect(busy.isTransient)
        #expect(Self.describe(link.reconnectFinished(attempt: 1, .failure(busy))) == ["schedule reconnect 2"])
        #expect(Self.describe(link.reconnectDue(attempt: 1)) == [], "a stale wake-up")
        #expect(Self.describe(link.reconnectDue(attempt: 2)) == ["reconnect 2"])
        #expect(
            Self.describe(link.reconnectFinished(attempt: 2, .failure(busy)))
                == ["announce reconnectFailed(connectionFailed)"])
    }

    @Test("a failure that is not transient stops reconnecting; a success ends it")
    func reconnectEnds() {
        var link = Self.connected(policy: .exponentialBackoff())
        _ = link.linkDown(.timeout, announce: true)
        _ = link.reconnectDue(attempt: 1)
        let refused = BLEError(.notPermitted, message: "refused")
        #expect(!refused.isTransient)
        #expect(
            Self.describe(link.reconnectFinished(attempt: 1, .failure(refused)))
                == ["announce reconnectFailed(notPermitted)"])
        var again = Self.connected(policy: .exponentialBackoff())
        _ = again.linkDown(.timeout, announce: true)
        _ = again.reconnectDue(attempt: 1)
        #expect(Self.describe(again.reconnectFinished(attempt: 1, .success(()))) == [])
        #expect(Self.describe(again.reconnectDue(attempt: 2)) == [])
    }

    @Test("no reconnection without a policy, nor after the device was removed")
    func noReconnect() {
        var never = Self.connected()
        #expect(
            Self.describe(never.linkDown(.remote, announce: true)) == [
                "fail operations (remote)", "announce disconnected(remote)",
            ])
        var removed = Self.connected(policy: Self.backoff)
        #expect(
            Self.describe(removed.linkDown(.deviceRemoved, announce: true))
                == ["fail operations (deviceRemoved)", "announce disconnected(deviceRemoved)"])
    }

    @Test("a loss announced later (its reason waited for) still reconnects; a second loss is no news")
    func lateAnnouncement() {
        var link = Self.connected(policy: Self.backoff)
        #expect(Self.describe(link.linkDown(.unknown, announce: false)) == ["fail operations (unknown)"])
        #expect(Self.describe(link.linkDown(.unknown, announce: true)) == [], "the link was down already")
        #expect(
            Self.describe(link.announceLinkDown(.adapterPoweredOff))
                == ["announce disconnected(adapterPoweredOff)", "schedule reconnect 1"])
    }

    @Test("the app connecting during a reconnection takes it over: it shares the attempt, no further one follows")
    func appTakesOver() {
        var link = Self.connected(policy: Self.backoff)
        _ = link.linkDown(.remote, announce: true)
        _ = link.reconnectDue(attempt: 1)
        _ = link.connect(
            3, "R", timeout: .seconds(5), retryable: false, reconnecting: true, device: Self.down, now: Self.t0)
        #expect(
            Self.describe(
                link.connect(
                    5, "B", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.down, now: Self.t0
                ))
                == ["stop reconnecting", "deadline of 5 at 5s"])
        let failed = BLEError(.connectionFailed, message: "le-connection-abort-by-local")
        #expect(
            Self.describe(link.connectReplied(call: 4, .failure(failed), device: Self.down))
                == ["resume R connectionFailed none", "resume B connectionFailed none"])
        #expect(Self.describe(link.reconnectFinished(attempt: 1, .failure(failed))) == [], "the policy is out of it")
    }

    @Test("changing the policy to never stops a reconnection that waits")
    func policyChange() {
        var link = Self.connected(policy: Self.backoff)
        _ = link.linkDown(.remote, announce: true)
        #expect(Self.describe(link.policyChanged(.never)) == ["stop reconnecting"])
        #expect(Self.describe(link.reconnectDue(attempt: 1)) == [])
    }

    // MARK: Disconnecting

    @Test("disconnect: the reply, then Connected=false; callers meanwhile share it")
    func disconnect() {
        var link = Self.connected(policy: Self.backoff)
        #expect(Self.describe(link.disconnect(3, "D")) == ["disconnect #3"])
        #expect(link.phase == .disconnecting)
        #expect(Self.describe(link.disconnect(4, "E")) == [])
        #expect(
            Self.describe(
                link.disconnectReplied(
                    call: 3, .success(()), device: Self.linked, now: Self.at(.seconds(1)), settleLimit: .seconds(2)))
                == ["settle #3 at 3s"], "5.66 sends Connected=false after its reply")
        #expect(
            Self.describe(link.deviceChanged(Self.down, daemonPresent: true))
                == ["fail operations (local)", "announce disconnected(local)", "resume D ok none", "resume E ok none"])
        #expect(link.phase == .disconnected)
        #expect(
            Self.describe(link.timerFired(.settle(call: 3), due: Self.at(.seconds(3)), now: Self.at(.seconds(3)))) == []
        )
        #expect(Self.describe(link.disconnect(5, "F")) == ["resume F ok none"], "not connected: at once")
    }

    @Test("a loss seen during disconnect() is ours: announced local, never reconnected")
    func lossDuringDisconnect() {
        var link = Self.connected(policy: Self.backoff)
        _ = link.disconnect(3, "D")
        #expect(
            Self.describe(link.linkDown(.unknown, announce: true))
                == ["fail operations (unknown)", "announce disconnected(local)"])
        #expect(
            Self.describe(
                link.disconnectReplied(
                    call: 3, .success(()), device: Self.down, now: Self.at(.seconds(1)), settleLimit: .seconds(2)))
                == ["resume D ok none"])
    }

    @Test("a refused Disconnect leaves the link as bluetoothd says it is")
    func refusedDisconnect() {
        var link = Self.connected()
        _ = link.disconnect(3, "D")
        let refused = BLEError(.failed, message: "refused")
        #expect(
            Self.describe(
                link.disconnectReplied(
                    call: 3, .failure(refused), device: Self.resolved, now: Self.at(.seconds(1)),
                    settleLimit: .seconds(2)))
                == ["resume D failed none"])
        #expect(link.phase == .connected)
        var gone = Self.connected()
        _ = gone.disconnect(3, "D")
        #expect(
            Self.describe(
                gone.disconnectReplied(
                    call: 3, .failure(refused), device: Self.down, now: Self.at(.seconds(1)), settleLimit: .seconds(2)))
                == ["fail operations (local)", "announce disconnected(local)", "resume D failed none"])
    }

    @Test("a cancelled disconnect() leaves at once; the peripheral stays connected")
    func cancelledDisconnect() {
        var link = Self.connected()
        _ = link.disconnect(3, "D")
        #expect(Self.describe(link.cancelDisconnect(3, device: Self.resolved)) == ["resume D cancelled none"])
        #expect(link.phase == .connected)
        #expect(
            Self.describe(
                link.disconnectReplied(
                    call: 3, .success(()), device: Self.resolved, now: Self.at(.seconds(1)), settleLimit: .seconds(2)))
                == [], "its late reply")
    }

    @Test("disconnect() while connecting fails the attempt and sends Disconnect")
    func disconnectWhileConnecting() {
        var link = Lifecycle(policy: .never)
        _ = link.connect(
            1, "A", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.down, now: Self.t0)
        #expect(Self.describe(link.disconnect(3, "D")) == ["resume A cancelled none", "disconnect #3"])
        #expect(link.phase == .disconnecting)
        #expect(Self.describe(link.connectReplied(call: 2, .success(()), device: Self.linked)) == [])
    }

    @Test("a connect during disconnect() takes over: the Disconnect's outcome no longer moves the state")
    func connectDuringDisconnect() {
        var link = Self.connected()
        _ = link.disconnect(3, "D")
        _ = link.connect(
            4, "A", timeout: .seconds(5), retryable: false, reconnecting: false, device: Self.linked, now: Self.t0)
        #expect(link.phase == .connecting)
        #expect(
            Self.describe(
                link.disconnectReplied(
                    call: 3, .success(()), device: Self.linked, now: Self.at(.seconds(1)), settleLimit: .seconds(2)))
                == ["resume D ok none"])
        #expect(link.phase == .connecting)
    }

    @Test("wake-ups matter while what they time is pending, and not after")
    func neededTimers() {
        var link = Lifecycle(policy: .never)
        _ = link.connect(
            1, "A", timeout: .seconds(30), retryable: true, reconnecting: false, device: Self.down, now: Self.t0)
        #expect(link.needs(.deadline(waiter: 1)))
        #expect(link.needs(.stall(attempt: 1)))
        _ = link.deviceChanged(Self.resolved, daemonPresent: true)
        #expect(!link.needs(.stall(attempt: 1)), "resolved: no second try")
        #expect(link.needs(.deadline(waiter: 1)), "the refresh still counts against it")
        let unneeded = link.unneeded(among: [.deadline(waiter: 1), .stall(attempt: 1), .settle(call: 9)])
        #expect(unneeded == [.stall(attempt: 1), .settle(call: 9)], "the shell's sweep asks the same question")
        _ = link.refreshFinished(attempt: 1)
        #expect(!link.needs(.deadline(waiter: 1)))
        _ = link.disconnect(3, "D")
        _ = link.disconnectReplied(
            call: 3, .success(()), device: Self.linked, now: Self.at(.seconds(1)), settleLimit: .seconds(2))
        #expect(link.needs(.settle(call: 3)))
        _ = link.deviceChanged(Self.down, daemonPresent: true)
        #expect(!link.needs(.settle(call: 3)))
    }

    @Test("reattaching a link another process opened shows it connected")
    func reattach() {
        var link = Lifecycle(policy: .never)
        _ = link.reattached(Self.down)
        #expect(link.phase == .disconnected)
        _ = link.reattached(Self.resolved)
        #expect(link.phase == .connected)
    }
}
