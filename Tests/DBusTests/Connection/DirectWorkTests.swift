import Dispatch
import Foundation
import Synchronization
import Testing

@testable import DBus

/// Work that code on the I/O thread asks for (a call, a wake-up) is done at once where the
/// loop allows it, and never ahead of work queued before it.
@Suite struct DirectWorkTests {
    /// A service that records, in the order its connection handles them, the `Record` calls
    /// (their text) and the `Mark` calls without reply ("mark"), and holds `Hold` until the gate
    /// opens.
    struct Recorder {
        static let record = MemberName(unchecked: "Record")
        static let hold = MemberName(unchecked: "Hold")

        let connection: Connection
        let gate = Gate()
        let received = EventLog<String>()

        init(_ connection: Connection) throws {
            self.connection = connection
            let gate = self.gate
            let received = self.received
            try connection.export(
                [
                    ExportedInterface(
                        TestNames.interface,
                        methods: [
                            .immediate(Self.record, in: try Signature("s")) { call in
                                if case .string(let text)? = call.body.first { received.record(text) }
                                return []
                            },
                            ExportedMethod(Self.hold, in: .empty, out: .empty) { _ in
                                received.record("hold")
                                await gate.wait()
                                return []
                            },
                            .immediate(SlowService.mark) { _ in
                                received.record("mark")
                                return []
                            },
                        ])
                ], at: TestNames.object)
        }

        func message(_ member: MemberName, _ body: [DBusValue] = [], noReply: Bool = false) -> DBusMessage {
            DBusMessage(
                kind: .methodCall, path: TestNames.object, interface: TestNames.interface, member: member,
                destination: connection.uniqueName, noReplyExpected: noReply, body: body)
        }
    }

    @Test("a call started on the I/O thread is sent before the code that started it goes on")
    func callGoesOutAtOnce() async throws {
        try await withServiceAndClient { _, service, client in
            let arrived = DispatchSemaphore(value: 0)
            let seen = Atomic<Bool>(false)
            try service.export(
                [
                    ExportedInterface(
                        try InterfaceName("org.example.Arrival"),
                        methods: [
                            .immediate(try MemberName("Arrive")) { _ in
                                arrived.signal()
                                return []
                            }
                        ])
                ], at: try ObjectPath("/org/example/arrival"))
            let arrival = DBusMessage(
                kind: .methodCall, path: try ObjectPath("/org/example/arrival"),
                interface: try InterfaceName("org.example.Arrival"), member: try MemberName("Arrive"),
                destination: service.uniqueName)
            // The task holds the I/O thread while it waits: a call left queued could not go out
            // before the wait ends, so the service would never see it in time.
            await withTaskExecutorPreference(client.executor) {
                client.startCall(arrival) { _ in }
                seen.store(arrived.wait(timeout: .now() + .seconds(20)) == .success, ordering: .relaxed)
            }
            let reached = seen.load(ordering: .relaxed)
            #expect(reached, "the call reached the service while its caller waited")
        }
    }

    @Test("a call started on the I/O thread goes out after a message queued before it")
    func callKeepsItsPlaceBehindQueuedWork() async throws {
        try await withServiceAndClient { _, service, client in
            let recorder = try Recorder(service)
            await withTaskExecutorPreference(client.executor) {
                // Sending queues a job; the call made next must not overtake it.
                try? client.send(recorder.message(SlowService.mark, noReply: true))
                client.startCall(recorder.message(Recorder.record, [.string("call")])) { _ in }
            }
            let received = try #require(await recorder.received.waitFor(2))
            #expect(received == ["mark", "call"])
        }
    }

    @Test("a call started by a reply's completion waits behind calls already waiting for the window")
    func callFromACompletionWaitsItsTurn() async throws {
        var options = testOptions
        options.maxCallsInFlight = 1
        try await withServiceAndClient(options: options) { _, service, client in
            let recorder = try Recorder(service)
            let thirdCall = recorder.message(Recorder.record, [.string("from the completion")])
            // Hold fills the window of one; "waiting" queues behind it. When Hold's reply frees
            // the slot, its completion (on the I/O thread) starts a call: the waiting one goes first.
            client.startCall(recorder.message(Recorder.hold)) { _ in
                client.startCall(thirdCall) { _ in }
            }
            client.startCall(recorder.message(Recorder.record, [.string("waiting")])) { _ in }
            _ = try #require(await recorder.received.waitFor(1))
            recorder.gate.open()
            let received = try #require(await recorder.received.waitFor(3))
            #expect(received == ["hold", "waiting", "from the completion"])
        }
    }
}
