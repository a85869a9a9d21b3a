import BLESimulator
import BlueZ
import DBus
import DBusTestSupport
import Foundation
import Testing

/// Shared by the control-interface tests: a private bus with a simulator on it and a client
/// connection that drives it the way another process would, with raw D-Bus calls only.
/// Namespaced so helpers of other test files in this target cannot clash with these.
enum ControlHarness {
    /// The heart-rate monitor most tests use.
    static let address = "C4:7C:8D:6A:11:22"
    static let measurement = "2A37"
    static let bodySensorLocation = "2A38"

    static let monitor = VirtualPeripheral(
        address: address, name: "HRM",
        services: [
            VirtualService(
                uuid: "180D",
                characteristics: [
                    VirtualCharacteristic(uuid: measurement, flags: ["notify"], value: [0x00, 0x48]),
                    VirtualCharacteristic(uuid: bodySensorLocation, flags: ["read"], value: [0x01]),
                ])
        ])

    /// A deadline short enough that a lost reply fails the test instead of stalling the suite,
    /// long enough never to fire on a loaded two-core machine.
    static let deadline: Duration = .seconds(20)

    static let clientOptions: ConnectionOptions = {
        var options = ConnectionOptions()
        options.defaultTimeout = deadline
        return options
    }()

    /// Runs `body` with a fresh bus, a simulator serving `peripherals` and a client connection;
    /// all three are stopped on every exit path.
    @discardableResult
    static func withSimulator<Result>(
        peripherals: [VirtualPeripheral] = [monitor], options: SimulatorOptions = SimulatorOptions(),
        profile: BlueZProfile = .v5_66,
        _ body: (TestBus, Simulator, Connection) async throws -> Result
    ) async throws -> Result {
        try await withTestBus { bus in
            let simulator = try await Simulator.start(
                on: .address(bus.address), profile: profile, options: options, peripherals: peripherals)
            defer { simulator.stop() }
            let client = try await bus.connect(options: clientOptions)
            defer { client.close() }
            return try await body(bus, simulator, client)
        }
    }

    // MARK: The control interface

    /// Calls a control method by its well-known name.
    @discardableResult
    static func control(_ client: Connection, _ member: String, _ arguments: [DBusValue] = []) async throws
        -> DBusMessage
    {
        try await client.call(
            destination: SimulatorControlInterface.busName, path: SimulatorControlInterface.objectPath,
            interface: SimulatorControlInterface.interface, member: try MemberName(member), arguments: arguments)
    }

    /// Calls a control method that must fail with the error `name`; returns the error.
    @discardableResult
    static func controlError(
        _ client: Connection, _ member: String, _ arguments: [DBusValue], named name: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> DBusError {
        do {
            let reply = try await control(client, member, arguments)
            Issue.record("\(member) succeeded with \(reply.body) instead of failing", sourceLocation: sourceLocation)
            return DBusError(.remote, message: "no error")
        } catch let error as DBusError {
            #expect(error.name == name, "\(member): \(error)", sourceLocation: sourceLocation)
            #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
            return error
        }
    }

    // MARK: Raw BlueZ

    static let adapter: ObjectPath = (try? BlueZPath.adapter(index: 0)) ?? .root

    static func member(_ text: String) throws -> MemberName { try MemberName(text) }

    /// Calls bluetoothd.
    @discardableResult
    static func bluez(
        _ client: Connection, _ path: ObjectPath, _ interface: InterfaceName, _ member: String,
        _ arguments: [DBusValue] = []
    ) async throws -> DBusMessage {
        try await client.call(
            destination: BlueZService.busName, path: path, interface: interface, member: try MemberName(member),
            arguments: arguments)
    }

    /// Discovers the peripheral at `address` and connects to it (`Device1.Connect`), as a
    /// central would; returns the device path once the link is up and the GATT objects exist.
    static func connect(_ client: Connection, address: String = address) async throws -> ObjectPath {
        let device = try await discover(client, address: address)
        try await bluez(client, device, BlueZInterface.device1, "Connect")
        return device
    }

    /// Starts discovery and waits for the device object of `address` to appear; returns its path.
    static func discover(_ client: Connection, address: String = address) async throws -> ObjectPath {
        let device = try BlueZPath.device(address: address, adapter: adapter)
        // Subscribed before discovery starts, so the device's InterfacesAdded cannot be missed.
        // Filtered here rather than with arg0: the bus matches argN against strings only.
        let added = ControlSignalReader(
            try await client.signals(
                matching: MatchRule(
                    sender: BlueZService.busName, path: .root, interface: .objectManager,
                    member: try member("InterfacesAdded"))))
        defer { added.subscription.cancel() }
        try await bluez(client, adapter, BlueZInterface.adapter1, "StartDiscovery")
        while let signal = await added.next() {
            if signal.body.first == .objectPath(device) { return device }
        }
        throw HarnessError("the device \(address) was not discovered")
    }

    /// The path of a GATT characteristic of a connected device, from `GetManagedObjects`.
    static func characteristicPath(_ client: Connection, device: ObjectPath, uuid: String) async throws -> ObjectPath {
        let reply = try await bluez(client, .root, .objectManager, "GetManagedObjects")
        guard let tree = reply.body.first else { throw HarnessError("GetManagedObjects replied nothing") }
        let objects = try ObjectManagerCoding.decodeManagedObjects(tree)
        let wanted = BlueZUUID.canonical(uuid)
        for path in objects.keys.sorted() where path.isDescendant(of: device) {
            guard case .string(let found)? = objects[path]?[BlueZInterface.gattCharacteristic1]?["UUID"] else {
                continue
            }
            if found == wanted { return path }
        }
        throw HarnessError("no characteristic \(uuid) under \(device)")
    }

    /// `PropertiesChanged` of one object and interface, subscribed now.
    static func propertyChanges(
        _ client: Connection, path: ObjectPath, interface: InterfaceName
    ) async throws -> ControlSignalReader {
        ControlSignalReader(
            try await client.signals(
                matching: MatchRule(
                    sender: BlueZService.busName, path: path, interface: .properties,
                    member: try member("PropertiesChanged"), arguments: [0: interface.rawValue])))
    }

    /// The changed properties of a `PropertiesChanged` signal.
    static func changed(_ signal: DBusMessage) throws -> [String: DBusValue] {
        guard signal.body.count > 1 else { throw HarnessError("PropertiesChanged without a dictionary") }
        return try ObjectManagerCoding.decodeProperties(signal.body[1])
    }
}

/// Reads a subscription one message at a time; a read that waits past its deadline cancels the
/// subscription, so it returns `nil` and the test fails instead of hanging.
final class ControlSignalReader {
    let subscription: SignalSubscription
    private var iterator: SignalSubscription.AsyncIterator

    init(_ subscription: SignalSubscription) {
        self.subscription = subscription
        iterator = subscription.makeAsyncIterator()
    }

    /// The next message, or `nil` when nothing came in time.
    func next(within deadline: Duration = ControlHarness.deadline) async -> DBusMessage? {
        let subscription = self.subscription
        let watchdog = Task {
            try await Task.sleep(for: deadline)
            subscription.cancel()
        }
        defer { watchdog.cancel() }
        return await iterator.next()
    }

    /// The next message whose changed properties include `name`, skipping others.
    func next(changing name: String) async throws -> DBusValue? {
        while let signal = await next() {
            if let value = try ControlHarness.changed(signal)[name] { return value }
        }
        return nil
    }
}

/// A test precondition that did not hold.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
