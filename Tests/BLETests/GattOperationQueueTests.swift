import DBus
import Foundation
import Testing

@testable import BLE

/// Transcripts of the GATT client's rules (``GattOperationQueue``), without a bus: events in,
/// actions out. Waiters, subscribers, requests and replies are plain strings.
@Suite("GATT operation queue transcripts")
struct GattOperationQueueTests {
    typealias Machine = GattOperationQueue<String, String, String, String>

    static let t0 = MachineInstant.now
    let heartRate: ObjectPath
    let battery: ObjectPath

    init() throws {
        heartRate = try ObjectPath("/org/bluez/hci0/dev_AA/service0010/char0011")
        battery = try ObjectPath("/org/bluez/hci0/dev_AA/service0020/char0021")
    }

    static func at(_ milliseconds: Int) -> MachineInstant { t0 + .milliseconds(milliseconds) }

    /// A readable form of the actions, for exact comparisons.
    static func describe(_ actions: [Machine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .send(let id, let request, let deadline): "send \(id) \(request) by \(deadline - t0)"
            case .resume(let waiter, .success(let reply)): "resume \(waiter) with \(reply)"
            case .resume(let waiter, .failure(let error)): "resume \(waiter) failing \(error.code)"
            case .deliver(let subscribers, let value): "deliver \(Array(value)) to \(subscribers)"
            case .wake(let instant, _): "wake at \(instant - t0)"
            case .disarm: "disarm"
            }
        }
    }

    /// A machine with the link up.
    static func connected() -> Machine {
        var machine = Machine()
        machine.setLinkUp(true)
        return machine
    }

    func submit(
        _ machine: inout Machine, _ request: String, path: ObjectPath? = nil, isRead: Bool = false,
        waiter: String, deadline: Int = 1000, now: Int = 0
    ) -> (UInt64, [String]) {
        let id = machine.reserve()
        let actions = machine.submit(
            id, request: request, path: path ?? heartRate, isRead: isRead, deadline: Self.at(deadline), waiter: waiter,
            now: Self.at(now))
        return (id, Self.describe(actions))
    }

    @Test("operations run one at a time, in call order")
    func ordering() {
        var machine = Self.connected()
        let (read, first) = submit(&machine, "read", waiter: "A")
        #expect(first == ["send 1 read by 1.0 seconds"])
        let (write, second) = submit(&machine, "write", waiter: "B", deadline: 2000)
        #expect(second == ["wake at 2.0 seconds"])
        let (_, third) = submit(&machine, "stop", waiter: "C", deadline: 3000)
        #expect(third == [])
        #expect(
            Self.describe(machine.finished(read, .success("r1"), echo: nil, now: Self.at(5)))
                == ["resume A with r1", "send 2 write by 2.0 seconds"])
        #expect(
            Self.describe(machine.finished(write, .success("w1"), echo: nil, now: Self.at(6)))
                == ["resume B with w1", "send 3 stop by 3.0 seconds", "disarm"])
    }

    @Test("while the link is down operations fail with notConnected, or with the refusal given until it is up")
    func refusalWhileDown() {
        var machine = Machine()
        #expect(submit(&machine, "read", waiter: "A").1 == ["resume A failing notConnected"])
        machine.refuse(with: BLEError(.bluetoothUnavailable, message: "the system bus went away"))
        #expect(submit(&machine, "read", waiter: "B").1 == ["resume B failing bluetoothUnavailable"])
        machine.setLinkUp(true)
        machine.refuse(with: BLEError(.bluetoothUnavailable, message: "ignored while up"))
        #expect(submit(&machine, "read", waiter: "C").1 == ["send 3 read by 1.0 seconds"])
        machine.setLinkUp(false)
        #expect(submit(&machine, "read", waiter: "D").1 == ["resume D failing notConnected"], "a new link down")
    }

    @Test("a queued operation's deadline counts from the call, not from when it is sent")
    func queuedDeadline() {
        var machine = Self.connected()
        let (slow, _) = submit(&machine, "slow write", waiter: "A", deadline: 5000)
        let (_, queued) = submit(&machine, "read", waiter: "B", deadline: 100)
        #expect(queued == ["wake at 0.1 seconds"])
        #expect(Self.describe(machine.timerFired(now: Self.at(100))) == ["resume B failing timeout"])
        // The slow write is unaffected, and nothing is left to send after it.
        #expect(
            Self.describe(machine.finished(slow, .success("ok"), echo: nil, now: Self.at(200))) == ["resume A with ok"])
    }

    @Test("a queued operation past its deadline when its turn comes is not sent")
    func expiredAtItsTurn() {
        var machine = Self.connected()
        let (slow, _) = submit(&machine, "slow", waiter: "A", deadline: 5000)
        _ = submit(&machine, "late", waiter: "B", deadline: 100)
        _ = submit(&machine, "next", waiter: "C", deadline: 5000)
        #expect(
            Self.describe(machine.finished(slow, .success("ok"), echo: nil, now: Self.at(300)))
                == ["resume A with ok", "resume B failing timeout", "send 3 next by 5.0 seconds", "disarm"])
    }

    @Test("cancelling a queued read resumes it at once; the running write is unaffected")
    func cancelQueued() {
        var machine = Self.connected()
        let (write, _) = submit(&machine, "write", waiter: "A")
        let (read, _) = submit(&machine, "read", isRead: true, waiter: "B")
        #expect(Self.describe(machine.cancel(read, now: Self.at(1))) == ["resume B failing cancelled", "disarm"])
        #expect(
            Self.describe(machine.finished(write, .success("ok"), echo: nil, now: Self.at(2))) == ["resume A with ok"])
    }

    @Test("cancelling the running operation resumes its caller; the next waits for bluetoothd's answer")
    func cancelRunning() {
        var machine = Self.connected()
        let (write, _) = submit(&machine, "write", waiter: "A")
        _ = submit(&machine, "read", waiter: "B")
        #expect(Self.describe(machine.cancel(write, now: Self.at(1))) == ["resume A failing cancelled"])
        // The call is still in flight at bluetoothd: the read is sent only after its answer.
        #expect(
            Self.describe(machine.finished(write, .success("late"), echo: nil, now: Self.at(9)))
                == ["send 2 read by 1.0 seconds", "disarm"])
    }

    @Test("a cancel that overtakes its request resumes the caller as it registers")
    func cancelBeforeSubmit() {
        var machine = Self.connected()
        let id = machine.reserve()
        #expect(machine.cancel(id, now: Self.at(0)).isEmpty)
        let actions = machine.submit(
            id, request: "read", path: heartRate, isRead: true, deadline: Self.at(1000), waiter: "A",
            now: Self.at(0))
        #expect(Self.describe(actions) == ["resume A failing cancelled"])
        // Nothing holds the slot.
        #expect(submit(&machine, "write", waiter: "B").1 == ["send 2 write by 1.0 seconds"])
    }

    @Test("a cancel after the answer changes nothing")
    func lateCancel() {
        var machine = Self.connected()
        let (read, _) = submit(&machine, "read", waiter: "A")
        _ = machine.finished(read, .success("r"), echo: nil, now: Self.at(1))
        #expect(machine.cancel(read, now: Self.at(2)).isEmpty)
        #expect(submit(&machine, "next", waiter: "B").1 == ["send 2 next by 1.0 seconds"])
    }

    @Test("InProgress is retried after a doubling pause, or at once when the attribute's value changes")
    func inProgress() {
        var machine = Self.connected()
        let busy = BLEError(.inProgress, message: "Operation already in progress")
        let (read, _) = submit(&machine, "read", isRead: true, waiter: "A")
        #expect(
            Self.describe(machine.finished(read, .failure(busy), echo: nil, now: Self.at(0))) == [
                "wake at 0.005 seconds"
            ])
        #expect(Self.describe(machine.timerFired(now: Self.at(5))) == ["send 1 read by 1.0 seconds"])
        #expect(
            Self.describe(machine.finished(read, .failure(busy), echo: nil, now: Self.at(6)))
                == ["wake at 0.016 seconds"])
        // The other client's read ends (its echo): sent again now, the value is a notification.
        _ = machine.subscribe(heartRate, id: 1, "S")
        #expect(
            Self.describe(machine.valueChanged(heartRate, Data([7]), serial: 40))
                == ["send 1 read by 1.0 seconds", "deliver [7] to [\"S\"]", "disarm"])
        #expect(
            Self.describe(machine.finished(read, .success("r"), echo: (Data([8]), 42), now: Self.at(8)))
                == ["resume A with r"])
    }

    @Test("InProgress until the deadline fails with InProgress, not a hang")
    func inProgressToTheDeadline() {
        var machine = Self.connected()
        let busy = BLEError(.inProgress, message: "busy")
        let (write, _) = submit(&machine, "write", waiter: "A", deadline: 4)
        #expect(
            Self.describe(machine.finished(write, .failure(busy), echo: nil, now: Self.at(0))) == [
                "resume A failing inProgress"
            ])
    }

    @Test("a read's echo is dropped; notifications meanwhile are delivered in order")
    func readEcho() {
        var machine = Self.connected()
        _ = machine.subscribe(heartRate, id: 1, "S")
        let (read, _) = submit(&machine, "read", isRead: true, waiter: "A")
        #expect(machine.valueChanged(heartRate, Data([1]), serial: 10).isEmpty)
        #expect(machine.valueChanged(heartRate, Data([9]), serial: 11).isEmpty)
        #expect(
            Self.describe(machine.finished(read, .success("r"), echo: (Data([9]), 12), now: Self.at(1)))
                == ["deliver [1] to [\"S\"]", "resume A with r"])
    }

    @Test("an echo arriving after its reply is still dropped, once")
    func lateEcho() {
        var machine = Self.connected()
        _ = machine.subscribe(heartRate, id: 1, "S")
        let (read, _) = submit(&machine, "read", isRead: true, waiter: "A")
        #expect(
            Self.describe(machine.finished(read, .success("r"), echo: (Data([5]), 20), now: Self.at(1))) == [
                "resume A with r"
            ])
        #expect(machine.valueChanged(heartRate, Data([5]), serial: 19).isEmpty)
        #expect(Self.describe(machine.valueChanged(heartRate, Data([5]), serial: 21)) == ["deliver [5] to [\"S\"]"])
    }

    @Test("values of other characteristics pass while one is read")
    func otherCharacteristics() {
        var machine = Self.connected()
        _ = machine.subscribe(battery, id: 1, "B")
        _ = submit(&machine, "read", isRead: true, waiter: "A")
        #expect(Self.describe(machine.valueChanged(battery, Data([80]), serial: 3)) == ["deliver [80] to [\"B\"]"])
    }

    @Test("link loss fails the running and queued operations at once and delivers held values")
    func linkLoss() {
        var machine = Self.connected()
        _ = machine.subscribe(heartRate, id: 1, "S")
        _ = submit(&machine, "read", isRead: true, waiter: "A")
        _ = submit(&machine, "write", waiter: "B")
        _ = machine.valueChanged(heartRate, Data([3]), serial: 5)
        #expect(
            Self.describe(machine.linkWentDown(BLEError(.disconnected, message: "gone")))
                == [
                    "resume A failing disconnected", "deliver [3] to [\"S\"]", "resume B failing disconnected",
                    "disarm",
                ])
        #expect(submit(&machine, "read", waiter: "C").1 == ["resume C failing notConnected"])
        // A late answer to the failed read changes nothing.
        #expect(machine.finished(1, .success("late"), echo: nil, now: Self.at(3)).isEmpty)
    }

    @Test("subscribers: the first is told, each removal once, removal of a characteristic returns them all")
    func subscribers() {
        var machine = Self.connected()
        let first = machine.subscribe(heartRate, id: 1, "S1")
        let second = machine.subscribe(heartRate, id: 2, "S2")
        #expect(first && !second)
        let delivered = Self.describe(machine.valueChanged(heartRate, Data([1]), serial: 1))
        #expect(delivered == ["deliver [1] to [\"S1\", \"S2\"]"])
        let removedOne = machine.unsubscribe(heartRate, id: 1)
        let removedTwo = machine.unsubscribe(heartRate, id: 2)
        let removedAgain = machine.unsubscribe(heartRate, id: 2)
        #expect(removedOne && removedTwo && !removedAgain)
        #expect(!machine.hasSubscribers(heartRate))
        _ = machine.subscribe(battery, id: 3, "B")
        let removed = machine.removeSubscribers(of: battery)
        #expect(removed == ["B"])
        let after = machine.valueChanged(battery, Data([1]), serial: 2)
        #expect(after.isEmpty)
    }

    @Test("the newest value is kept with or without subscribers; one subscribing after the last left is first again")
    func valuesAndSubscribersShareAnEntry() {
        var machine = Self.connected()
        #expect(machine.lastValue(heartRate) == nil)
        let toNobody = machine.plainDelivery(heartRate, Data([1]))
        #expect(toNobody == [], "no subscriber: kept, handed to none")
        #expect(machine.lastValue(heartRate) == Data([1]))
        let first = machine.subscribe(heartRate, id: 1, "S1")
        let toOne = machine.plainDelivery(heartRate, Data([2]))
        let left = machine.unsubscribe(heartRate, id: 1)
        #expect(first && toOne == ["S1"] && left)
        #expect(!machine.hasSubscribers(heartRate))
        #expect(machine.lastValue(heartRate) == Data([2]), "the value outlives its subscribers")
        let firstAgain = machine.subscribe(heartRate, id: 2, "S2")
        let removed = machine.removeSubscribers(of: heartRate)
        let removedAgain = machine.removeSubscribers(of: heartRate)
        let firstAfterRemoval = machine.subscribe(heartRate, id: 3, "S3")
        #expect(firstAgain && removed == ["S2"] && removedAgain == [] && firstAfterRemoval)
        machine.notedValue(battery, Data([9]))
        #expect(machine.lastValue(battery) == Data([9]))
        #expect(!machine.hasSubscribers(battery), "a noted value subscribes nobody")
        #expect(machine.lastValue(heartRate) == Data([2]))
    }

    @Test("writes without response go out together, in order, up to the window; other operations wait for them")
    func pipelinedWrites() {
        var machine = Machine(pipelineWindow: 2)
        machine.setLinkUp(true)
        func command(_ name: String, _ waiter: String) -> (UInt64, [String]) {
            let id = machine.reserve()
            let actions = machine.submit(
                id, request: name, path: heartRate, isRead: false, pipelined: true, deadline: Self.at(1000),
                waiter: waiter, now: Self.at(0))
            return (id, Self.describe(actions))
        }
        let (first, sentFirst) = command("c1", "A")
        let (second, sentSecond) = command("c2", "B")
        let (_, heldThird) = command("c3", "C")
        #expect(sentFirst == ["send 1 c1 by 1.0 seconds"])
        #expect(sentSecond == ["send 2 c2 by 1.0 seconds"], "beside the first: no round trip each")
        #expect(heldThird == ["wake at 1.0 seconds"], "beyond the window it waits")
        let (read, heldRead) = submit(&machine, "read", isRead: true, waiter: "D")
        #expect(heldRead == [])
        #expect(
            Self.describe(machine.finished(first, .success("ok"), echo: nil, now: Self.at(1)))
                == ["resume A with ok", "send 3 c3 by 1.0 seconds"])
        #expect(
            Self.describe(machine.finished(second, .success("ok"), echo: nil, now: Self.at(2))) == ["resume B with ok"])
        // The read goes only once every write ahead of it is answered, alone.
        #expect(
            Self.describe(machine.finished(3, .success("ok"), echo: nil, now: Self.at(3)))
                == ["resume C with ok", "send \(read) read by 1.0 seconds", "disarm"])
        let (_, afterRead) = command("c4", "E")
        #expect(afterRead == ["wake at 1.0 seconds"], "a write without response waits behind a read")
    }

    @Test("readiness for writes without response: up with the link, down while the window is full or work waits")
    func writeReadiness() {
        var machine = Machine(pipelineWindow: 2)
        #expect(machine.readinessChange() == nil, "no link: not ready, as first told")
        machine.setLinkUp(true)
        #expect(machine.readinessChange() == true)
        func command(_ name: String, _ waiter: String) -> UInt64 {
            let id = machine.reserve()
            _ = machine.submit(
                id, request: name, path: heartRate, isRead: false, pipelined: true, deadline: Self.at(1000),
                waiter: waiter, now: Self.at(0))
            return id
        }
        let first = command("c1", "A")
        #expect(machine.readinessChange() == nil, "one in flight leaves room")
        let second = command("c2", "B")
        #expect(machine.readinessChange() == false, "the window is full")
        #expect(!machine.acceptsWriteWithoutResponse)
        let third = command("c3", "C")
        #expect(machine.queuedCount == 1, "a write past the window waits its turn")
        _ = machine.finished(first, .success("ok"), echo: nil, now: Self.at(1))
        #expect(machine.readinessChange() == nil, "the third took the freed slot: still full")
        _ = machine.finished(second, .success("ok"), echo: nil, now: Self.at(2))
        #expect(machine.readinessChange() == true, "room again, nothing waiting")
        // A read in flight holds everything else back.
        _ = machine.finished(third, .success("ok"), echo: nil, now: Self.at(3))
        let (read, _) = submit(&machine, "read", isRead: true, waiter: "D")
        #expect(machine.readinessChange() == false)
        _ = machine.finished(read, .success("r"), echo: nil, now: Self.at(4))
        #expect(machine.readinessChange() == true)
        _ = machine.linkWentDown(BLEError(.disconnected, message: "gone"))
        #expect(machine.readinessChange() == false, "no link, no writes")
    }

    @Test(
        "plain notifications are decided without an action; a read of the path or an expected echo takes the long way")
    func plainDelivery() {
        var machine = Self.connected()
        _ = machine.subscribe(heartRate, id: 1, "S")
        #expect(machine.plainDelivery(heartRate, Data([1])) == ["S"])
        #expect(machine.plainDelivery(battery, Data([2])) == [], "nobody listens there")
        let (read, _) = submit(&machine, "read", isRead: true, waiter: "A")
        #expect(machine.plainDelivery(heartRate, Data([1])) == nil, "a read of it is under way")
        #expect(machine.plainDelivery(battery, Data([2])) == [])
        _ = machine.finished(read, .success("r"), echo: (Data([1]), 9), now: Self.at(1))
        #expect(machine.plainDelivery(heartRate, Data([1])) == nil, "its echo is still expected")
        _ = machine.valueChanged(heartRate, Data([1]), serial: 8)
        #expect(machine.plainDelivery(heartRate, Data([1])) == ["S"])
    }

    @Test(
        "the last value is the newest one notified or noted, in arrival order; a read's echo and a refused plain delivery leave it"
    )
    func lastValue() {
        var machine = Self.connected()
        _ = machine.subscribe(heartRate, id: 1, "S")
        #expect(machine.lastValue(heartRate) == nil)
        _ = machine.plainDelivery(heartRate, Data([1]))
        #expect(machine.lastValue(heartRate) == Data([1]))
        let (read, _) = submit(&machine, "read", isRead: true, waiter: "A")
        #expect(machine.plainDelivery(heartRate, Data([9])) == nil)
        #expect(machine.lastValue(heartRate) == Data([1]), "a refused plain delivery changes nothing")
        _ = machine.valueChanged(heartRate, Data([2]), serial: 5)
        #expect(machine.lastValue(heartRate) == Data([2]), "a value held during a read is the newest")
        machine.notedValue(heartRate, Data([3]))  // the read's reply, as the shell notes it
        _ = machine.finished(read, .success("r"), echo: (Data([3]), 7), now: Self.at(1))
        #expect(machine.lastValue(heartRate) == Data([3]))
        #expect(machine.lastValue(battery) == nil, "per characteristic")
    }

    @Test("an earlier deadline asks for an earlier wake-up; a later one does not")
    func wakeUps() {
        var machine = Self.connected()
        _ = submit(&machine, "running", waiter: "A", deadline: 9000)
        #expect(submit(&machine, "q1", waiter: "B", deadline: 500).1 == ["wake at 0.5 seconds"])
        #expect(submit(&machine, "q2", waiter: "C", deadline: 800).1 == [])
        #expect(submit(&machine, "q3", waiter: "D", deadline: 200).1 == ["wake at 0.2 seconds"])
        #expect(
            Self.describe(machine.timerFired(now: Self.at(200))) == ["resume D failing timeout", "wake at 0.5 seconds"])
    }

    @Test("the wake-up for a queued operation is withdrawn once it is sent: nothing is left waiting for time")
    func wakeWithdrawnWhenSent() {
        var machine = Self.connected()
        let (running, _) = submit(&machine, "write", waiter: "A", deadline: 9000)
        let (queued, asked) = submit(&machine, "read", waiter: "B", deadline: 500)
        #expect(asked == ["wake at 0.5 seconds"])
        #expect(
            Self.describe(machine.finished(running, .success("w"), echo: nil, now: Self.at(10)))
                == ["resume A with w", "send 2 read by 0.5 seconds", "disarm"])
        #expect(
            Self.describe(machine.finished(queued, .success("r"), echo: nil, now: Self.at(20))) == ["resume B with r"])
    }

    @Test("the wake-up stays while another queued operation still has a deadline, and goes with the last")
    func wakeKeptForTheRest() {
        var machine = Self.connected()
        let (running, _) = submit(&machine, "write", waiter: "A", deadline: 9000)
        _ = submit(&machine, "read", waiter: "B", deadline: 500)
        let (last, _) = submit(&machine, "read", waiter: "C", deadline: 800)
        #expect(
            Self.describe(machine.finished(running, .success("w"), echo: nil, now: Self.at(10)))
                == ["resume A with w", "send 2 read by 0.5 seconds"])
        #expect(
            Self.describe(machine.cancel(last, now: Self.at(11))) == ["resume C failing cancelled", "disarm"])
    }

    @Test(
        "cancelling the only queued operation, or losing the link, withdraws the wake-up; a fired one is not withdrawn")
    func wakeWithdrawnOnCancelAndLinkLoss() {
        var machine = Self.connected()
        _ = submit(&machine, "write", waiter: "A", deadline: 9000)
        let (queued, _) = submit(&machine, "read", waiter: "B", deadline: 500)
        #expect(Self.describe(machine.cancel(queued, now: Self.at(1))) == ["resume B failing cancelled", "disarm"])
        #expect(submit(&machine, "read", waiter: "C", deadline: 600).1 == ["wake at 0.6 seconds"])
        #expect(
            Self.describe(machine.linkWentDown(BLEError(.disconnected, message: "gone")))
                == ["resume A failing disconnected", "resume C failing disconnected", "disarm"])
        machine.setLinkUp(true)
        _ = submit(&machine, "write", waiter: "D", deadline: 9000)
        _ = submit(&machine, "read", waiter: "E", deadline: 700)
        #expect(Self.describe(machine.timerFired(now: Self.at(700))) == ["resume E failing timeout"])
    }

    @Test("an InProgress retry's wake-up is withdrawn when the value change sends it early")
    func retryWakeWithdrawn() {
        var machine = Self.connected()
        let (read, _) = submit(&machine, "read", waiter: "A")
        let busy = BLEError(.inProgress, message: "busy")
        #expect(
            Self.describe(machine.finished(read, .failure(busy), echo: nil, now: Self.at(0))) == [
                "wake at 0.005 seconds"
            ])
        #expect(
            Self.describe(machine.valueChanged(heartRate, Data([1]), serial: 3)) == [
                "send 1 read by 1.0 seconds", "disarm",
            ])
    }
}
