import DBus
import Foundation

/// A service whose `Slow` method does not answer until the test opens its gate, reporting each
/// call it receives; `Echo` answers at once. Used by the timeout, cancellation and disconnection
/// tests.
struct SlowService {
    static let slow = fixedMember("Slow")
    static let echo = fixedMember("Echo")
    static let mark = fixedMember("Mark")

    let connection: Connection
    let gate = Gate()
    /// The calls `Slow` received, in order.
    let received = EventLog<DBusMessage>()
    /// The calls `Mark` received.
    let marks = EventLog<DBusMessage>()

    init(_ connection: Connection) throws {
        self.connection = connection
        let gate = self.gate
        let received = self.received
        let marks = self.marks
        try connection.export(
            [
                ExportedInterface(
                    TestNames.interface,
                    methods: [
                        ExportedMethod(Self.slow, in: .empty, out: try Signature("s")) { call in
                            received.record(call)
                            await gate.wait()
                            return [.string("late")]
                        },
                        .immediate(Self.echo, in: try Signature("i"), out: try Signature("i")) { call in call.body },
                        .immediate(Self.mark) { call in
                            marks.record(call)
                            return []
                        },
                        .immediate(TestNames.ping) { _ in [] },
                    ])
            ], at: TestNames.object)
    }

    /// Sends `Mark` from `client` as a call without reply, which bypasses the call window:
    /// once the service has it, the bus has handled everything `client` sent before.
    func mark(from client: Connection) throws {
        try client.send(
            DBusMessage(
                kind: .methodCall, path: TestNames.object, interface: TestNames.interface, member: Self.mark,
                destination: connection.uniqueName, noReplyExpected: true))
    }

    /// Calls `Slow` from `client`.
    func callSlow(from client: Connection, timeout: Duration? = nil) async throws(DBusError) -> DBusMessage {
        try await client.call(
            destination: connection.uniqueName, path: TestNames.object, interface: TestNames.interface,
            member: Self.slow, timeout: timeout)
    }

    /// Calls `Echo` from `client` and returns the number it echoed.
    func echo(_ value: Int32, from client: Connection, timeout: Duration? = nil) async throws(DBusError) -> Int32 {
        let reply = try await client.call(
            destination: connection.uniqueName, path: TestNames.object, interface: TestNames.interface,
            member: Self.echo, arguments: [.int32(value)], timeout: timeout)
        return try reply.argument(0)
    }

    /// Answers a recorded `Slow` call by hand, right now: the reply is queued on the service
    /// connection before anything the test does next, so a later round trip orders after it.
    func answerByHand(_ call: DBusMessage) throws {
        try connection.send(
            DBusMessage(
                kind: .methodReturn, destination: call.sender, replySerial: call.serial, body: [.string("by hand")]))
    }

    private static func fixedMember(_ text: String) -> MemberName {
        do { return try MemberName(text) } catch { preconditionFailure("\(error)") }
    }
}
