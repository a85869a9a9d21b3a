import BlueZ
import DBus
import Foundation

/// An `org.bluez.Agent1` a test exports on a client's connection, as bluetoothctl's agent
/// would: it records each call bluetoothd makes and answers as scripted.
final class ScriptedAgent: Sendable {
    static let path = Paths.path("/test/agent")

    /// How the agent answers a question.
    enum Answer: Sendable {
        /// A passkey for `RequestPasskey`; an empty reply otherwise.
        case accept(passkey: UInt32)
        /// An error reply of this name.
        case refuse(String)
        /// Never.
        case silence
    }

    private let calls = PosixMutex<[String]>([])
    /// Replies kept unanswered on purpose.
    private let held = PosixMutex<[MethodReply]>([])
    private let answer: Answer

    init(answer: Answer) { self.answer = answer }

    /// Calls received, as `Member(arguments…)`.
    var received: [String] { calls.withLock { $0 } }

    /// Exports the agent on `connection` and registers it with `capability`.
    func register(on connection: Connection, capability: String) async throws {
        let methods = try [
            ("RequestPasskey", "o", "u"), ("RequestConfirmation", "ou", ""), ("DisplayPasskey", "ouq", ""),
            ("RequestAuthorization", "o", ""), ("Cancel", "", ""), ("Release", "", ""),
        ].map { name, input, output in
            ExportedMethod.deferred(try MemberName(name), in: try Signature(input), out: try Signature(output)) {
                [weak self] call, reply in self?.handle(call, reply, output: output)
            }
        }
        try connection.export([ExportedInterface(BlueZInterface.agent1, methods: methods)], at: Self.path)
        _ = try await connection.call(
            destination: BlueZService.busName, path: BlueZService.managerPath, interface: BlueZInterface.agentManager1,
            member: BlueZMethod.registerAgent, arguments: [.objectPath(Self.path), .string(capability)])
    }

    private func handle(_ call: DBusMessage, _ reply: MethodReply, output: String) {
        let arguments = call.body.map { value -> String in
            switch value {
            case .objectPath(let path): path.rawValue
            case .uint32(let number): String(number)
            case .uint16(let number): String(number)
            default: "\(value)"
            }
        }
        calls.withLock { $0.append("\(call.member?.rawValue ?? "?")(\(arguments.joined(separator: ", ")))") }
        let question = ["RequestPasskey", "RequestConfirmation", "RequestAuthorization"].contains(call.member?.rawValue)
        guard question else { return reply.succeed() }
        switch answer {
        case .accept(let passkey): reply.succeed(output == "u" ? [.uint32(passkey)] : [])
        case .refuse(let name): reply.fail(DBusError.reply(name, ""))
        case .silence: held.withLock { $0.append(reply) }
        }
    }

    /// Answers the questions held so far (``Answer/silence``) with an error reply named `name`.
    func answerHeld(refusing name: String) {
        for reply in held.withLock({ held in
            defer { held.removeAll() }
            return held
        }) {
            reply.fail(DBusError.reply(name, ""))
        }
    }

    /// Waits until a call named `member` arrived.
    func waitFor(_ member: String, within deadline: Duration = Fidelity.eventDeadline) async throws {
        let end = ContinuousClock.now + deadline
        while !received.contains(where: { $0.hasPrefix(member + "(") }) {
            guard ContinuousClock.now < end else { throw DBusError(.timeout, message: "no \(member) came") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
