import BLE
import BLESimulator
import BlueZ
import DBus
import DBusTestSupport
import Foundation
import Synchronization
import Testing

// Helpers shared by the bus tests: log recording, a raw D-Bus probe, sequence collection and
// the virtual peripherals the tests use. SimulatorFixture.swift has the fixture itself.

/// Records what a ``BLELogger`` says, so a test can wait for a D-Bus call to have been made
/// (a barrier made of the SDK's own trace) instead of sleeping.
final class LogRecorder: Sendable {
    private struct State {
        var lines: [String] = []
        var subscribers: [UInt64: AsyncStream<String>.Continuation] = [:]
        var next: UInt64 = 0
    }

    private let state = PosixMutex(State())
    let includesPayloads: Bool
    let level: BLELogger.Level

    init(level: BLELogger.Level = .trace, includesPayloads: Bool = false) {
        self.level = level
        self.includesPayloads = includesPayloads
    }

    /// A logger whose lines land here.
    var logger: BLELogger {
        BLELogger(level: level, includesPayloads: includesPayloads) { [self] _, message, _ in append(message) }
    }

    private func append(_ line: String) {
        let subscribers = state.withLock { state in
            state.lines.append(line)
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(line) }
    }

    /// Every line so far.
    var lines: [String] { state.withLock { $0.lines } }

    /// How many lines so far contain `text` (end with it, with `suffix`).
    func count(_ text: String, suffix: Bool = false) -> Int {
        lines.filter { suffix ? $0.hasSuffix(text) : $0.contains(text) }.count
    }

    /// The lines so far, then every new one.
    func stream() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let id = state.withLock { state in
            for line in state.lines { continuation.yield(line) }
            state.next += 1
            state.subscribers[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Waits until the `occurrence`-th line containing `text` (ending with it, with `suffix`)
    /// was logged.
    @discardableResult
    func waitFor(
        _ text: String, suffix: Bool = false, occurrence: Int = 1, within timeout: Duration = .seconds(10)
    ) async throws -> String {
        let seen = PosixMutex(0)
        let line = try await first(stream(), within: timeout) { line in
            guard suffix ? line.hasSuffix(text) : line.contains(text) else { return false }
            return seen.withLock { count in
                count += 1
                return count == occurrence
            }
        }
        return try #require(
            line,
            "no log line with \"\(text)\" (#\(occurrence)) within \(timeout); log: \(lines.joined(separator: " | "))")
    }
}

/// A plain D-Bus client on the fixture's bus, for what the SDK does not expose: reading the
/// simulated daemon's properties, calling it as another process would, or forging signals.
struct BusProbe: Sendable {
    let connection: Connection

    static func open(_ fixture: SimulatorFixture) async throws -> BusProbe {
        BusProbe(connection: try await fixture.bus.connect())
    }

    func close() { connection.close() }

    /// `org.freedesktop.DBus.Properties.Get` on bluetoothd.
    func property(_ path: String, _ interface: String, _ name: String) async throws -> DBusValue {
        let reply = try await call(path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)])
        return try #require(reply.body.first).unwrappingVariant
    }

    /// Calls bluetoothd.
    @discardableResult
    func call(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) async throws
        -> DBusMessage
    {
        try await connection.call(
            destination: BlueZService.busName, path: try ObjectPath(path), interface: try InterfaceName(interface),
            member: try MemberName(member), arguments: arguments, timeout: .seconds(10))
    }

    /// Makes sure the bus has routed everything this connection sent so far (a round trip to
    /// the bus daemon).
    func barrier() async throws {
        _ = try await connection.listNames()
    }
}

/// Returns once bluetoothd has handled every call the central sent before: a no-op call on the
/// central's own connection (the bus keeps one sender's messages to one receiver in order).
/// For a powered adapter only.
func handledByBluetoothd(_ central: Central) async throws {
    try await central.setPowered(true)
}

/// Makes a call after everything the test checks and waits until the monitor recorded it:
/// the monitor reads on its own thread, behind the bus, so a round trip alone does not
/// mean it has seen what came before.
func monitorCaughtUp(_ monitor: BusMonitor, with central: Central) async throws {
    let before = monitor.messages.count
    try await handledByBluetoothd(central)
    try await eventually(within: .seconds(30), "the monitor saw the last call") {
        monitor.messages.dropFirst(before).contains {
            $0.kind == .methodCall && $0.member?.rawValue == "Set"
                && $0.sender?.rawValue == central.diagnostics.connectionName
        }
    }
}

/// Paths of the simulated daemon.
enum SimPath {
    static let adapter = "/org/bluez/hci0"

    static func device(_ address: String) -> String {
        adapter + "/dev_" + address.replacingOccurrences(of: ":", with: "_")
    }
}

/// Collects the first `count` elements of `sequence` (fewer if it ends), or fails after `timeout`.
func collect<S: AsyncSequence & Sendable>(
    _ sequence: S, count: Int, within timeout: Duration = .seconds(10),
    where predicate: @escaping @Sendable (S.Element) -> Bool = { _ in true }
) async throws -> [S.Element] where S.Element: Sendable {
    try await withThrowingTaskGroup(of: [S.Element]?.self) { group in
        group.addTask {
            var elements: [S.Element] = []
            for try await element in sequence where predicate(element) {
                elements.append(element)
                if elements.count == count { break }
            }
            return elements
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let result = try await group.next() ?? nil
        group.cancelAll()
        return try #require(result, "fewer than \(count) elements within \(timeout)")
    }
}

/// Waits until `condition` holds, checking every few milliseconds; for counters that have no
/// event of their own. Fails after `timeout`.
func eventually(
    within timeout: Duration = .seconds(10), _ what: String = "condition", _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("\(what) did not hold within \(timeout)")
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// An event made to happen some time from now: the later event a causal check orders against
/// ("the wait timed out before the adapter powered on"). A test reads ``hasBegun`` as soon as
/// the operation under test ended, and checks the order only, never how long anything took:
/// the operation's own end is due seconds before the event, and a loaded machine delays both
/// and leaves their order, while an operation that waited past its own end (for the default
/// deadline, say) comes after the event.
struct LaterEvent: Sendable {
    private final class Flag: Sendable {
        let begun = Atomic<Bool>(false)
    }

    private let task: Task<Void, any Error>
    private let flag: Flag

    init(after delay: Duration, _ event: @escaping @Sendable () async throws -> Void) {
        let flag = Flag()
        self.flag = flag
        task = Task {
            try await Task.sleep(for: delay)
            flag.begun.store(true, ordering: .releasing)
            try await event()
        }
    }

    /// Whether the event has begun; false proves that what ended before this was read came first.
    var hasBegun: Bool { flag.begun.load(ordering: .acquiring) }

    /// Waits until the event has happened.
    func happened() async throws { try await task.value }
}

/// Runs `body` and returns the ``BLEError`` it throws (failing the test when it throws
/// nothing or something else).
func bleError<T>(_ body: () async throws -> T) async -> BLEError? {
    do {
        _ = try await body()
        Issue.record("expected a BLEError")
        return nil
    } catch let error as BLEError {
        return error
    } catch {
        Issue.record("expected a BLEError, got \(error)")
        return nil
    }
}

extension SimulatorFixture {
    /// A central on the fixture's bus, powered on.
    func poweredCentral(options: CentralOptions = CentralOptions()) async throws -> Central {
        let central = try await central(options: options)
        try await central.waitUntilPoweredOn(timeout: .seconds(10))
        return central
    }

    /// A powered central and a peripheral connected through it.
    func connected(
        _ address: String = SimulatorFixture.heartRateAddress, options: CentralOptions = CentralOptions()
    ) async throws -> (Central, Peripheral) {
        let central = try await poweredCentral(options: options)
        let peripheral = try await central.connect(try PeripheralID(address: address), timeout: .seconds(10))
        return (central, peripheral)
    }
}

/// Central options with a trace logger.
func tracing(_ recorder: LogRecorder, _ change: (inout CentralOptions) -> Void = { _ in }) -> CentralOptions {
    var options = CentralOptions()
    options.logger = recorder.logger
    change(&options)
    return options
}

/// The virtual peripherals of the tests.
enum TestPeripherals {
    static let sensorAddress = "D1:00:00:00:00:01"

    /// A peripheral with most GATT shapes: several services, an included service, two
    /// characteristics with one UUID, descriptors, long and notifying values.
    static func sensor(address: String = sensorAddress, mtu: UInt16 = 185) -> VirtualPeripheral {
        var notifying = VirtualCharacteristic(
            uuid: "2A37", flags: ["read", "notify"], value: [0xEE],
            descriptors: [VirtualDescriptor(uuid: "2901", value: HexData(Data("Heart rate".utf8)))])
        notifying.notifyValues = []
        var peripheral = VirtualPeripheral(
            address: address, name: "Sensor",
            services: [
                VirtualService(
                    uuid: "180D", includes: ["180F"],
                    characteristics: [
                        notifying,
                        VirtualCharacteristic(uuid: "2A38", flags: ["read"], value: [0x01]),
                        VirtualCharacteristic(
                            uuid: "2A39", flags: ["read", "write", "write-without-response"], value: [0x00],
                            descriptors: [
                                VirtualDescriptor(uuid: "2901", value: HexData(Data("Control".utf8))),
                                VirtualDescriptor(
                                    uuid: "12345678-1234-5678-1234-56789abcdef0", value: [0x00], writable: true),
                            ]),
                    ]),
                VirtualService(
                    uuid: "180F",
                    characteristics: [
                        VirtualCharacteristic(uuid: "2A19", flags: ["read", "notify"], value: [0x64]),
                        VirtualCharacteristic(uuid: "2A19", flags: ["read"], value: [0x32]),
                    ]),
                VirtualService(
                    uuid: "180A",
                    characteristics: [
                        VirtualCharacteristic(
                            uuid: "2A29", flags: ["read"], value: HexData(Data("swift-ble simulator, long value".utf8)))
                    ]),
            ])
        peripheral.serviceUUIDs = ["180D"]
        peripheral.advertisingIntervalMs = 20
        peripheral.mtu = mtu
        return peripheral
    }

    /// A simple advertiser. Its manufacturer data makes every advertisement visible to a scan
    /// that allows duplicates (BlueZ re-sends advertising data then, not an unchanged RSSI).
    static func advertiser(
        _ address: String, name: String? = nil, services: [String] = [], rssi: Int16 = -60,
        manufacturerData: [UInt16: HexData] = [0xFFFF: [0x01]]
    ) -> VirtualPeripheral {
        var peripheral = VirtualPeripheral(
            address: address, name: name,
            services: [
                VirtualService(
                    uuid: services.first ?? "180A",
                    characteristics: [VirtualCharacteristic(uuid: "2A29", flags: ["read"], value: [0x41])])
            ])
        peripheral.serviceUUIDs = services
        peripheral.manufacturerData = manufacturerData
        peripheral.rssi = rssi
        peripheral.advertisingIntervalMs = 20
        return peripheral
    }
}

/// Drains a scan iterator until it throws (returning the error) or ends (recording an issue).
func failure(of iterator: inout ScanSequence.Iterator) async -> BLEError? {
    do {
        while try await iterator.next() != nil {}
        Issue.record("the scan ended without an error")
        return nil
    } catch {
        return error
    }
}
