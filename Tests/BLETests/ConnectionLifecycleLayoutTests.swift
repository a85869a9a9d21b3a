import Testing

@testable import BLE

/// Transcripts of ``ConnectionLifecycle`` about the barrier after resolution: a link whose GATT
/// objects the mirror held before the attempt (and still holds, unchanged) is up at once; one
/// whose objects arrive with the attempt waits for the refresh (quirk Q1).
@Suite("Connection lifecycle: the layout the mirror holds")
struct ConnectionLifecycleLayoutTests {
    typealias Lifecycle = ConnectionLifecycleTests.Lifecycle
    typealias Device = ConnectionLifecycleTests.Device

    static func describe(_ actions: [Lifecycle.Action]) -> [String] { ConnectionLifecycleTests.describe(actions) }
    static let t0 = ConnectionLifecycleTests.t0

    static func connecting(from device: Device) -> Lifecycle {
        var link = Lifecycle(policy: .never)
        _ = link.connect(1, "A", timeout: .seconds(5), retryable: false, reconnecting: false, device: device, now: t0)
        return link
    }

    @Test("a reconnection with the objects held and unchanged: up at resolution, no refresh")
    func heldLayout() {
        var link = Self.connecting(from: Device(layout: 7))
        #expect(
            Self.describe(link.connectReplied(call: 2, .success(()), device: Device(connected: true, layout: 7))) == [])
        #expect(
            Self.describe(link.deviceChanged(Device(connected: true, resolved: true, layout: 7), daemonPresent: true))
                == ["announce connected", "resume A ok rearm"])
        #expect(link.phase == .connected)
    }

    @Test("resolution before the Connect reply with the layout held: up at once, the late reply changes nothing")
    func heldLayoutResolvedBeforeReply() {
        var link = Self.connecting(from: Device(layout: 7))
        let resolved = Device(connected: true, resolved: true, layout: 7)
        #expect(
            Self.describe(link.deviceChanged(resolved, daemonPresent: true))
                == ["announce connected", "resume A ok rearm"])
        #expect(Self.describe(link.connectReplied(call: 2, .success(()), device: resolved)) == [])
        #expect(link.phase == .connected)
    }

    @Test("objects changed during the attempt (a changed database): the refresh is the barrier")
    func changedLayout() {
        var link = Self.connecting(from: Device(layout: 7))
        #expect(
            Self.describe(link.deviceChanged(Device(connected: true, resolved: true, layout: 9), daemonPresent: true))
                == ["refresh resolved @1"])
        #expect(link.phase == .connecting)
        #expect(Self.describe(link.refreshFinished(attempt: 1)) == ["announce connected", "resume A ok rearm"])
    }

    @Test("no objects before the attempt (a first connection): the refresh, whatever arrived meanwhile")
    func firstConnection() {
        var link = Self.connecting(from: Device())
        #expect(
            Self.describe(link.deviceChanged(Device(connected: true, resolved: true, layout: 3), daemonPresent: true))
                == ["refresh resolved @1"])
    }

    @Test("all objects removed during the attempt: the refresh, not the stale layout")
    func objectsRemoved() {
        var link = Self.connecting(from: Device(layout: 7))
        #expect(
            Self.describe(link.deviceChanged(Device(connected: true, resolved: true), daemonPresent: true))
                == ["refresh resolved @1"])
    }

    @Test("linked elsewhere with the objects held: up without Connect or refresh")
    func alreadyResolvedHeld() {
        var link = Lifecycle(policy: .never)
        #expect(
            Self.describe(
                link.connect(
                    1, "A", timeout: .seconds(5), retryable: false, reconnecting: false,
                    device: Device(connected: true, resolved: true, layout: 4), now: Self.t0))
                == ["deadline of 1 at 5s", "announce connected", "resume A ok rearm"])
        #expect(!link.needs(.deadline(waiter: 1)), "the shell forgets the deadline")
    }
}
