import BLESimulator
import BlueZ
import DBus
import DBusTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// A simulator and a GATT/advertising application on one private bus, torn down afterwards.
enum ServerHarness {
    /// `/org/bluez/hci0`.
    static let adapter: ObjectPath = (try? BlueZPath.adapter(index: 0)) ?? .root

    static func run(
        profile: BlueZProfile = .v5_66, requestTimeout: Duration = .seconds(5),
        _ body: (Simulator, TestApplication, TestBus) async throws -> Void
    ) async throws {
        try await withTestBus { bus in
            var options = SimulatorOptions()
            options.serverRequestTimeout = requestTimeout
            let simulator = try await Simulator.start(on: .address(bus.address), profile: profile, options: options)
            defer { simulator.stop() }
            let app = try await TestApplication.connect(bus)
            defer { app.close() }
            try await body(simulator, app, bus)
        }
    }
}

/// Every call bluetoothd made into a test application.
final class CallLog: Sendable {
    private let calls = PosixMutex<[DBusMessage]>([])

    func record(_ call: DBusMessage) { calls.withLock { $0.append(call) } }

    /// Calls of `member`, optionally on `path`, in arrival order.
    func calls(_ member: String, path: ObjectPath? = nil) -> [DBusMessage] {
        calls.withLock { all in
            all.filter { $0.member?.rawValue == member && (path == nil || $0.path == path) }
        }
    }

    /// Waits until `count` calls of `member` arrived (or fails after `timeout`: long, since it
    /// returns as soon as they are there, and the suite runs many tests at once on few cores,
    /// where a call three seconds late was seen).
    @discardableResult
    func wait(
        for member: String, count: Int = 1, path: ObjectPath? = nil, timeout: Duration = .seconds(20)
    ) async throws -> [DBusMessage] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let found = calls(member, path: path)
            if found.count >= count { return found }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw ServerTestError("no \(count)× \(member) within \(timeout)")
    }
}

struct ServerTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// How a test application answers one method.
enum Reaction: Sendable {
    /// Reply with these values.
    case reply([DBusValue])
    /// Reply with this D-Bus error.
    case error(String, String)
    /// Never reply (the reply is kept until the application closes).
    case hold
    /// Reply with these values this much later: the later event a test orders against.
    case replyAfter(Duration, [DBusValue])
}

/// A GATT characteristic, descriptor or service an application exports.
struct AppDescriptor: Sendable {
    var name: String
    var uuid: String
    var flags: [String]
    var handle: UInt16?
}

struct AppCharacteristic: Sendable {
    var name: String
    var uuid: String
    var flags: [String]
    var handle: UInt16?
    var writeAcquired = false
    var notifyAcquired = false
    /// The declared reply of ReadValue, `ay` unless a test wants a malformed one.
    var readSignature = "ay"
    var descriptors: [AppDescriptor] = []
}

struct AppService: Sendable {
    var name: String
    var uuid: String
    var primary = true
    var handle: UInt16?
    var characteristics: [AppCharacteristic]
}

/// An application on its own connection, exporting GATT services under an object manager and
/// advertisements, the way the SDK's PeripheralManager will; it records what bluetoothd calls.
final class TestApplication: Sendable {
    let connection: Connection
    let root: ObjectPath
    /// The adapter it registers on.
    let adapter: ObjectPath
    let log = CallLog()
    private let reactions = PosixMutex<[String: Reaction]>([:])
    private let held = PosixMutex<[MethodReply]>([])
    /// The application's ends of the sockets it handed out, by characteristic path.
    let notifySockets = PosixMutex<[ObjectPath: FileDescriptor]>([:])
    let writeSockets = PosixMutex<[ObjectPath: FileDescriptor]>([:])

    private init(connection: Connection, root: ObjectPath, adapter: ObjectPath) {
        self.connection = connection
        self.root = root
        self.adapter = adapter
    }

    static func connect(
        _ bus: TestBus, root: String = "/com/example/app", adapter: ObjectPath = ServerHarness.adapter
    ) async throws -> TestApplication {
        let connection = try await bus.connect()
        let app = TestApplication(connection: connection, root: try ObjectPath(root), adapter: adapter)
        connection.addObjectManager(at: app.root)
        return app
    }

    func close() {
        held.withLock { $0.removeAll() }
        connection.close()
    }

    /// The path of an object below the root: `root/a/b`.
    func path(_ elements: String...) -> ObjectPath {
        var path = root
        for element in elements { path = (try? path.appending(element)) ?? path }
        return path
    }

    /// Sets how `member` on `path` answers from now on.
    func react(_ member: MemberName, at path: ObjectPath, _ reaction: Reaction) {
        reactions.withLock { $0["\(path.rawValue) \(member.rawValue)"] = reaction }
    }

    private func reaction(_ call: DBusMessage, default fallback: Reaction) -> Reaction {
        let key = "\(call.path?.rawValue ?? "") \(call.member?.rawValue ?? "")"
        return reactions.withLock { $0[key] } ?? fallback
    }

    /// Answers through `reply` as configured, recording the call first.
    private func answer(_ call: DBusMessage, _ reply: MethodReply, default fallback: Reaction) {
        log.record(call)
        switch reaction(call, default: fallback) {
        case .reply(let values): reply.succeed(values)
        case .error(let name, let message): reply.fail(DBusError.reply(name, message))
        case .hold: held.withLock { $0.append(reply) }
        case .replyAfter(let delay, let values):
            Task {
                try? await Task.sleep(for: delay)
                reply.succeed(values)
            }
        }
    }

    // MARK: GATT objects

    /// Exports `services` (paths `root/<service>/<characteristic>/<descriptor>`).
    func export(_ services: [AppService]) throws {
        for service in services {
            let servicePath = path(service.name)
            var properties = [
                ExportedProperty("UUID", value: .string(service.uuid)),
                ExportedProperty("Primary", value: .boolean(service.primary)),
            ]
            if let handle = service.handle {
                properties.append(ExportedProperty("Handle", value: .uint16(handle), access: .readwrite))
            }
            try connection.export(
                [ExportedInterface(BlueZInterface.gattService1, properties: properties)], at: servicePath)
            for characteristic in service.characteristics {
                try export(characteristic, service: servicePath)
            }
        }
    }

    private func export(_ characteristic: AppCharacteristic, service: ObjectPath) throws {
        let path = (try? service.appending(characteristic.name)) ?? service
        var properties = [
            ExportedProperty("UUID", value: .string(characteristic.uuid)),
            ExportedProperty("Service", value: .objectPath(service)),
            ExportedProperty("Flags", value: .array(.string, characteristic.flags.map { .string($0) })),
            ExportedProperty("Value", value: .bytes(Data())),
        ]
        if let handle = characteristic.handle {
            properties.append(ExportedProperty("Handle", value: .uint16(handle), access: .readwrite))
        }
        if characteristic.writeAcquired { properties.append(ExportedProperty("WriteAcquired", value: .boolean(false))) }
        if characteristic.notifyAcquired {
            properties.append(ExportedProperty("NotifyAcquired", value: .boolean(false)))
        }
        let methods: [ExportedMethod] = [
            .deferred(
                BlueZMethod.readValue, in: try Signature("a{sv}"), out: try Signature(characteristic.readSignature)
            ) {
                [weak self] call, reply in self?.answer(call, reply, default: .reply([.bytes(Data([0x2A]))]))
            },
            .deferred(BlueZMethod.writeValue, in: try Signature("aya{sv}")) { [weak self] call, reply in
                self?.answer(call, reply, default: .reply([]))
            },
            .deferred(BlueZMethod.startNotify) { [weak self] call, reply in
                self?.answer(call, reply, default: .reply([]))
            },
            .deferred(BlueZMethod.stopNotify) { [weak self] call, reply in
                self?.answer(call, reply, default: .reply([]))
            },
            .deferred(BlueZMethod.confirm) { [weak self] call, reply in self?.answer(call, reply, default: .reply([]))
            },
            .deferred(BlueZMethod.acquireNotify, in: try Signature("a{sv}"), out: try Signature("hq")) {
                [weak self] call, reply in self?.acquire(call, reply, path: path, notify: true)
            },
            .deferred(BlueZMethod.acquireWrite, in: try Signature("a{sv}"), out: try Signature("hq")) {
                [weak self] call, reply in self?.acquire(call, reply, path: path, notify: false)
            },
        ]
        try connection.export(
            [ExportedInterface(BlueZInterface.gattCharacteristic1, methods: methods, properties: properties)], at: path)
        for descriptor in characteristic.descriptors {
            try export(descriptor, characteristic: path)
        }
    }

    private func export(_ descriptor: AppDescriptor, characteristic: ObjectPath) throws {
        let path = (try? characteristic.appending(descriptor.name)) ?? characteristic
        var properties = [
            ExportedProperty("UUID", value: .string(descriptor.uuid)),
            ExportedProperty("Characteristic", value: .objectPath(characteristic)),
            ExportedProperty("Flags", value: .array(.string, descriptor.flags.map { .string($0) })),
        ]
        if let handle = descriptor.handle {
            properties.append(ExportedProperty("Handle", value: .uint16(handle), access: .readwrite))
        }
        let methods: [ExportedMethod] = [
            .deferred(BlueZMethod.readValue, in: try Signature("a{sv}"), out: try Signature("ay")) {
                [weak self] call, reply in self?.answer(call, reply, default: .reply([.bytes(Data([0xD0]))]))
            },
            .deferred(BlueZMethod.writeValue, in: try Signature("aya{sv}")) { [weak self] call, reply in
                self?.answer(call, reply, default: .reply([]))
            },
        ]
        try connection.export(
            [ExportedInterface(BlueZInterface.gattDescriptor1, methods: methods, properties: properties)], at: path)
    }

    /// AcquireNotify/AcquireWrite: a SEQPACKET pair, one end to bluetoothd, one kept here.
    private func acquire(_ call: DBusMessage, _ reply: MethodReply, path: ObjectPath, notify: Bool) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            log.record(call)
            return reply.fail(DBusError.reply(BlueZErrorName.failed, "socketpair"))
        }
        let ours = FileDescriptor(owning: fds[0])
        let theirs = FileDescriptor(owning: fds[1])
        if notify {
            notifySockets.withLock { $0[path] = ours }
        } else {
            writeSockets.withLock { $0[path] = ours }
        }
        // Logged once the socket is kept: a test that waits for the call then takes the socket.
        log.record(call)
        reply.succeed([.unixFD(theirs), .uint16(185)])
    }

    /// Changes a characteristic's `Value`, emitting `PropertiesChanged` (a notification).
    func setValue(_ value: Data, at path: ObjectPath) throws {
        try connection.setProperty(
            "Value", to: .bytes(value), interface: BlueZInterface.gattCharacteristic1, path: path)
    }

    /// The handle bluetoothd wrote back into an object.
    func handle(at path: ObjectPath, _ interface: InterfaceName) -> UInt16? {
        guard case .uint16(let handle)? = connection.property("Handle", interface: interface, path: path) else {
            return nil
        }
        return handle
    }

    // MARK: Advertisements

    /// Exports an `LEAdvertisement1` object with `properties` (exact D-Bus values) and a
    /// `Release` method.
    func exportAdvertisement(_ name: String, _ properties: [String: DBusValue], writable: Set<String> = []) throws {
        let exported = properties.sorted { $0.key < $1.key }.map {
            ExportedProperty($0.key, value: $0.value, access: writable.contains($0.key) ? .readwrite : .read)
        }
        let release = ExportedMethod.deferred(BlueZMethod.release) { [weak self] call, reply in
            self?.answer(call, reply, default: .reply([]))
        }
        try connection.export(
            [ExportedInterface(BlueZInterface.leAdvertisement1, methods: [release], properties: exported)],
            at: path(name))
    }

    // MARK: Calls to bluetoothd

    private func callAdapter(
        _ interface: InterfaceName, _ member: MemberName, _ arguments: [DBusValue]
    ) async throws(DBusError) {
        _ = try await connection.call(
            destination: BlueZService.busName, path: adapter, interface: interface, member: member,
            arguments: arguments, timeout: .seconds(10))
    }

    private static let noOptions = DBusValue.dictionary(key: .string, value: .variant, [])

    func registerApplication(_ path: ObjectPath? = nil) async throws(DBusError) {
        try await callAdapter(
            BlueZInterface.gattManager1, BlueZMethod.registerApplication, [.objectPath(path ?? root), Self.noOptions])
    }

    func unregisterApplication(_ path: ObjectPath? = nil) async throws(DBusError) {
        try await callAdapter(
            BlueZInterface.gattManager1, BlueZMethod.unregisterApplication, [.objectPath(path ?? root)])
    }

    func registerAdvertisement(_ name: String) async throws(DBusError) {
        try await callAdapter(
            BlueZInterface.leAdvertisingManager1, BlueZMethod.registerAdvertisement,
            [.objectPath(path(name)), Self.noOptions])
    }

    func unregisterAdvertisement(_ name: String) async throws(DBusError) {
        try await callAdapter(
            BlueZInterface.leAdvertisingManager1, BlueZMethod.unregisterAdvertisement, [.objectPath(path(name))])
    }

    /// `GetAll(LEAdvertisingManager1)` on hci0, variants unwrapped.
    func advertisingManagerProperties() async throws -> [String: DBusValue] {
        let reply = try await connection.call(
            destination: BlueZService.busName, path: ServerHarness.adapter, interface: .properties,
            member: BlueZMethod.getAll, arguments: [.string(BlueZInterface.leAdvertisingManager1.rawValue)])
        return try ObjectManagerCoding.decodeProperties(try #require(reply.body.first))
    }
}

/// The error a registration call failed with (name and message), or `nil` when it succeeded.
func registrationError(_ body: () async throws(DBusError) -> Void) async -> (name: String, message: String)? {
    do {
        try await body()
        return nil
    } catch {
        return (error.name ?? "", error.message)
    }
}

/// The options dict of a recorded call as key → D-Bus type signature and value.
func options(of call: DBusMessage, at index: Int) -> [String: DBusValue] {
    guard call.body.indices.contains(index), let decoded = try? ObjectManagerCoding.decodeProperties(call.body[index])
    else { return [:] }
    return decoded
}

/// Waits until `condition` holds (or fails after `timeout`, long for the reason
/// ``CallLog/wait(for:count:path:timeout:)`` gives).
func eventually(timeout: Duration = .seconds(20), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw ServerTestError("condition not met within \(timeout)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}
