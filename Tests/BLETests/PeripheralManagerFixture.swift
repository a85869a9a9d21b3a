import BLE
import BLESimulator
import DBus
import Foundation
import Testing

// The peripheral-role fixture: a simulator (bluetoothd and the remote centrals) and a
// PeripheralManager on one private bus, plus the services the tests publish.

extension SimulatorFixture {
    /// Runs `body` with a powered-on manager on a fresh bus and simulator; closes it afterwards.
    static func withManager(
        profile: BlueZProfile = .v5_66, simulatorOptions: SimulatorOptions = SimulatorOptions(),
        options: PeripheralManagerOptions = PeripheralManagerOptions(),
        configure: (SimulatorFixture, inout PeripheralManagerOptions) -> Void = { _, _ in },
        _ body: (SimulatorFixture, PeripheralManager) async throws -> Void
    ) async throws {
        try await run(profile: profile, options: simulatorOptions, peripherals: []) { fixture in
            var options = options
            configure(fixture, &options)
            let manager = try await PeripheralManager(
                bus: .address(fixture.bus.address), adapter: "hci0", options: options)
            try await manager.waitUntilPoweredOn(timeout: .seconds(10))
            do {
                try await body(fixture, manager)
            } catch {
                await manager.close()
                throw error
            }
            await manager.close()
            // Closed, the manager leaves nothing: no task, stream, bus call or socket.
            await settle(manager.diagnostics, "after the manager's close") { $0.outstanding == 0 }
        }
    }
}

extension PeripheralManager {
    /// Publishes the heart-rate service and advertises; returns the manager's events from then
    /// on (for the tests that then take bluetoothd or the bus away).
    func publishHeartRate() async throws -> AsyncStream<PeripheralManagerEvent> {
        try await add(TestServices.heartRate)
        try await startAdvertising(Advertisement(localName: "swift-ble"))
        return events
    }
}

enum TestServices {
    static let heartRate = MutableService(
        uuid: "180D",
        characteristics: [
            MutableCharacteristic(uuid: "2A37", properties: [.notify]),
            MutableCharacteristic(uuid: "2A38", properties: [.read], value: Data([0x01, 0x02, 0x03])),
            MutableCharacteristic(
                uuid: "2A39", properties: [.read, .write, .writeWithoutResponse],
                permissions: [.readable, .writeable, .authorizationRequired],
                descriptors: [MutableDescriptor(uuid: "2901", value: Data("Control".utf8))]),
            MutableCharacteristic(uuid: "2A3A", properties: [.indicate]),
        ])

    static let secured = MutableService(
        uuid: "12345678-1234-5678-1234-56789abcdef0",
        characteristics: [
            MutableCharacteristic(
                uuid: "12345678-1234-5678-1234-56789abcdef1", properties: [.read, .write],
                permissions: [.readAuthenticationRequired, .writeEncryptionRequired],
                descriptors: [MutableDescriptor(uuid: "2901", permissions: .readWrite)])
        ])

    static let battery = MutableService(
        uuid: "180F", characteristics: [MutableCharacteristic(uuid: "2A19", properties: [.read, .notify])])
}

/// Collects a manager's requests on a task of its own (``PeripheralManager/requests`` is
/// iterated once), so tests can wait for the next one with a deadline.
final class RequestCollector: Sendable {
    private let box: RequestBox
    private let consumer: Task<Void, Never>

    init(_ manager: PeripheralManager) {
        let requests = manager.requests
        let box = RequestBox()
        self.box = box
        consumer = Task {
            for await request in requests { box.append(request) }
        }
    }

    deinit { consumer.cancel() }

    /// The next request not taken yet, or nil (and a recorded issue) after `timeout`.
    func next(within timeout: Duration = .seconds(5)) async throws -> PeripheralRequest? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let request = box.take() { return request }
            try await Task.sleep(for: .milliseconds(2))
        }
        Issue.record("no request within \(timeout)")
        return nil
    }
}

/// The requests received and not yet taken, in order.
private final class RequestBox: Sendable {
    private let requests = PosixMutex<[PeripheralRequest]>([])
    func append(_ request: PeripheralRequest) { requests.withLock { $0.append(request) } }
    func take() -> PeripheralRequest? { requests.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
}

/// The next event of `events` that `matches`, or nil after `timeout`.
func nextEvent(
    _ events: AsyncStream<PeripheralManagerEvent>, within timeout: Duration = .seconds(5),
    _ matches: @escaping @Sendable (PeripheralManagerEvent) -> Bool
) async throws -> PeripheralManagerEvent? {
    let event = try await first(events, within: timeout, where: matches)
    if event == nil { Issue.record("no matching event within \(timeout)") }
    return event
}

/// The next notification the simulated centrals received from characteristic `uuid`.
func nextNotification(
    _ notifications: AsyncStream<ServerNotification>, within timeout: Duration = .seconds(5),
    where matches: @escaping @Sendable (ServerNotification) -> Bool = { _ in true }
) async throws -> ServerNotification? {
    let notification = try await first(notifications, within: timeout, where: matches)
    if notification == nil { Issue.record("no notification within \(timeout)") }
    return notification
}

/// Runs a remote central's request while the test answers it, and returns its outcome.
func remote<T: Sendable>(_ body: @escaping @Sendable () async throws(RemoteCentralError) -> T) -> Task<
    Result<T, RemoteCentralError>, Never
> {
    Task {
        do throws(RemoteCentralError) { return .success(try await body()) } catch { return .failure(error) }
    }
}
