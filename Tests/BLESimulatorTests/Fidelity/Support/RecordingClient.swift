import BlueZ
import DBus
import DBusTestSupport
import Foundation

/// A client of the simulated bluetoothd that records what it sees, as an SDK would see it: it
/// subscribes to every signal of `org.bluez` (and to `NameOwnerChanged` of `org.bluez`) in
/// one subscription first, then makes raw D-Bus calls, each recorded with its reply or error
/// in a ``Transcript``.
final class RecordingClient: Sendable {
    let connection: Connection
    let transcript = Transcript()
    private let subscription: PosixMutex<SignalHandlerSubscription?> = PosixMutex(nil)
    private let barriers = PosixMutex<UInt32>(0)

    /// The interface of the client's own barrier signals (see ``settle()``).
    private static let barrierInterface = InterfaceName.barrier

    private init(connection: Connection) {
        self.connection = connection
    }

    /// Connects to `bus` and subscribes before returning, so no signal sent after this is lost.
    static func connect(to bus: TestBus) async throws -> RecordingClient {
        var options = ConnectionOptions()
        options.defaultTimeout = Fidelity.callTimeout
        let connection = try await bus.connect(options: options)
        let client = RecordingClient(connection: connection)
        let transcript = client.transcript
        // Recorded on the I/O thread as each signal is dispatched, in the bus's order: no task
        // or stream between the bus and the transcript (a stream's hand-over, inside the
        // concurrency runtime, is one ThreadSanitizer cannot see, and it reported the message's
        // fields as racing their decoding).
        let subscription = try await connection.signalHandler(
            matchingAny: [
                MatchRule(sender: BlueZService.busName),
                MatchRule(
                    sender: .bus, interface: .bus, member: try MemberName("NameOwnerChanged"),
                    arguments: [0: BlueZService.busName.rawValue]),
                MatchRule(sender: connection.uniqueName, interface: barrierInterface),
            ]
        ) { message in
            if message.interface == barrierInterface {
                if case .uint32(let number)? = message.body.first { transcript.reach(barrier: number) }
                return
            }
            transcript.record(
                TranscriptEntry(
                    kind: .signal, path: message.path, interface: message.interface,
                    member: message.member?.rawValue ?? "?", body: message.body, sender: message.sender,
                    serial: message.serial))
        }
        client.subscription.withLock { $0 = subscription }
        return client
    }

    /// The client's unique bus name.
    var uniqueName: BusName { connection.uniqueName }

    /// Leaves the bus: bluetoothd sees the name go and drops this client's sessions.
    func close() {
        connection.close()
        subscription.withLock { $0 }?.cancel()
    }

    /// Waits until every signal delivered so far is recorded: the client sends itself a
    /// signal, which the bus delivers after everything it delivered before, in one ordered
    /// stream.
    func settle() async throws {
        let number = barriers.withLock { count -> UInt32 in
            count += 1
            return count
        }
        try connection.emitSignal(
            path: .root, interface: Self.barrierInterface, member: try MemberName("Barrier"),
            arguments: [.uint32(number)])
        try await transcript.wait(forBarrier: number)
    }

    /// Calls `org.bluez` and records the call and its answer; returns the reply's arguments.
    @discardableResult
    func call(
        _ path: ObjectPath, _ interface: InterfaceName, _ member: String, _ arguments: [DBusValue] = [],
        timeout: Duration? = nil
    ) async throws -> [DBusValue] {
        try await result(path, interface, member, arguments, timeout: timeout).get()
    }

    /// ``call(_:_:_:_:timeout:)`` as a `Result`, for calls expected to fail.
    func result(
        _ path: ObjectPath, _ interface: InterfaceName, _ member: String, _ arguments: [DBusValue] = [],
        timeout: Duration? = nil
    ) async -> Result<[DBusValue], DBusError> {
        recordCall(path, interface, member, arguments)
        let outcome: Result<DBusMessage, DBusError>
        do {
            outcome = .success(
                try await connection.call(
                    destination: BlueZService.busName, path: path, interface: interface,
                    member: try MemberName(member), arguments: arguments, timeout: timeout))
        } catch {
            outcome = .failure(error)
        }
        return await recordAnswer(outcome, path, interface, member)
    }

    /// Records a call as it is made.
    private func recordCall(
        _ path: ObjectPath, _ interface: InterfaceName, _ member: String, _ arguments: [DBusValue]
    ) {
        transcript.record(
            TranscriptEntry(kind: .call, path: path, interface: interface, member: member, body: arguments))
    }

    /// Records a call's answer after the signals sent before it, and returns its arguments.
    private func recordAnswer(
        _ outcome: Result<DBusMessage, DBusError>, _ path: ObjectPath, _ interface: InterfaceName, _ member: String
    ) async -> Result<[DBusValue], DBusError> {
        // Signals sent before the answer are recorded first, then the answer goes among them.
        try? await settle()
        switch outcome {
        case .success(let reply):
            transcript.record(
                TranscriptEntry(
                    kind: .reply, path: path, interface: interface, member: member, body: reply.body,
                    sender: reply.sender, serial: reply.serial))
            return .success(reply.body)
        case .failure(let error):
            transcript.record(
                TranscriptEntry(
                    kind: .error, path: path, interface: interface, member: member,
                    errorName: error.name ?? "(\(error.code))", body: [.string(error.message)]))
            return .failure(error)
        }
    }

    /// Starts a call whose answer comes later and returns once bluetoothd has received it, so
    /// the test can act while the call is pending. The task's value is the call's outcome.
    ///
    /// The call is on the connection's queue when `startCall` returns, so a round trip to
    /// `org.bluez` started after it goes out after it: the bus routes the call first, and once
    /// that round trip is answered, bluetoothd has the call. (A call made from a task of its own
    /// could reach the loop after the round trip, under a sanitizer's slowdown, and then reach
    /// the daemon that replaced bluetoothd in a restart test.)
    func startPending(
        _ path: ObjectPath, _ interface: InterfaceName, _ member: String, _ arguments: [DBusValue] = [],
        timeout: Duration? = nil
    ) async throws -> Task<Result<[DBusValue], DBusError>, Never> {
        recordCall(path, interface, member, arguments)
        let message = DBusMessage(
            kind: .methodCall, path: path, interface: interface, member: try MemberName(member),
            destination: BlueZService.busName, body: arguments)
        let (answers, answered) = AsyncStream.makeStream(of: Result<DBusMessage, DBusError>.self)
        connection.startCall(message, timeout: timeout) { outcome in
            answered.yield(outcome)
            answered.finish()
        }
        _ = try await connection.call(
            destination: BlueZService.busName, path: BlueZService.managerPath, interface: .introspectable,
            member: try MemberName("Introspect"))
        return Task {
            var iterator = answers.makeAsyncIterator()
            let outcome =
                await iterator.next() ?? .failure(DBusError(.disconnected, message: "the call was never answered"))
            return await self.recordAnswer(outcome, path, interface, member)
        }
    }

    /// The error a call fails with, or `nil` when it succeeds.
    func error(
        _ path: ObjectPath, _ interface: InterfaceName, _ member: String, _ arguments: [DBusValue] = [],
        timeout: Duration? = nil
    ) async -> DBusError? {
        if case .failure(let error) = await result(path, interface, member, arguments, timeout: timeout) {
            return error
        }
        return nil
    }

    // MARK: Standard interfaces

    /// `GetManagedObjects` on `/`, decoded.
    func managedObjects() async throws -> ManagedObjects {
        let body = try await call(.root, .objectManager, "GetManagedObjects")
        return try ManagedObjects(body.first)
    }

    /// `Properties.Get`, the value unwrapped.
    func get(_ path: ObjectPath, _ interface: InterfaceName, _ name: String) async throws -> DBusValue {
        let body = try await call(path, .properties, "Get", [.string(interface.rawValue), .string(name)])
        return body.first?.unwrappingVariant ?? .boolean(false)
    }

    /// `Properties.GetAll`, unwrapped.
    func getAll(_ path: ObjectPath, _ interface: InterfaceName) async throws -> [String: DBusValue] {
        let body = try await call(path, .properties, "GetAll", [.string(interface.rawValue)])
        return TreeValue.properties(body.first ?? .boolean(false))
    }

    /// `Properties.Set`.
    func set(_ path: ObjectPath, _ interface: InterfaceName, _ name: String, _ value: DBusValue) async throws {
        try await call(path, .properties, "Set", [.string(interface.rawValue), .string(name), .variant(value)])
    }
}

extension InterfaceName {
    /// `org.swiftble.Test.Barrier`, the test client's own ordering signal.
    fileprivate static let barrier: InterfaceName = {
        do { return try InterfaceName("org.swiftble.Test.Barrier") } catch { preconditionFailure("\(error)") }
    }()
}

/// A decoded `GetManagedObjects` reply, keeping the order of interfaces per object.
struct ManagedObjects: Sendable {
    /// Objects by path: their interfaces in reply order, each with its properties.
    var objects: [ObjectPath: [(name: String, properties: [String: DBusValue])]] = [:]

    init(_ value: DBusValue?) throws {
        guard case .dictionary(.objectPath, _, let entries)? = value else {
            throw DBusError(.typeMismatch, message: "GetManagedObjects did not answer a{oa{sa{sv}}}")
        }
        for entry in entries {
            guard case .objectPath(let path) = entry.key, case .dictionary(_, _, let interfaces) = entry.value else {
                continue
            }
            objects[path] = interfaces.compactMap { interface in
                guard case .string(let name) = interface.key else { return nil }
                return (name, TreeValue.properties(interface.value))
            }
        }
    }

    /// The interface names of `path`, in reply order.
    func interfaces(_ path: ObjectPath) -> [String] { objects[path]?.map(\.name) ?? [] }

    /// The properties of one interface of `path`.
    func properties(_ path: ObjectPath, _ interface: InterfaceName) -> [String: DBusValue]? {
        objects[path]?.first { $0.name == interface.rawValue }?.properties
    }

    /// The paths below `prefix` (exclusive).
    func paths(under prefix: ObjectPath) -> [ObjectPath] {
        objects.keys.filter { $0.isDescendant(of: prefix) }.sorted()
    }
}

/// Helpers for `a{sv}` values.
enum TreeValue {
    /// An `a{sv}` as a dictionary, variants unwrapped.
    static func properties(_ value: DBusValue) -> [String: DBusValue] {
        guard case .dictionary(_, _, let entries) = value else { return [:] }
        var out: [String: DBusValue] = [:]
        for entry in entries {
            if case .string(let name) = entry.key { out[name] = entry.value.unwrappingVariant }
        }
        return out
    }

    /// The D-Bus signature of each property, e.g. `["RSSI": "n"]`.
    static func signatures(_ properties: [String: DBusValue]) -> [String: String] {
        properties.mapValues(\.type.signature)
    }
}
