import BLE
import BlueZ
import DBus
import Foundation

/// The test peripheral as our own ``PeripheralManager`` on hci1: it publishes
/// ``OwnPeripheralLayout``, advertises it, answers every read from the values it holds and
/// keeps every write, and records what it saw (requests, subscriptions, confirmations), so a
/// test can check both halves of the SDK talking through bluetoothd.
final class OwnPeripheral: PeripheralDriver {
    /// A request as the manager received it.
    struct SeenRequest: Sendable, Equatable {
        var kind: PeripheralRequest.Kind
        var characteristic: BluetoothUUID
        var central: CentralID?
        var value: Data
        var writeType: WriteRequestType?
    }

    /// What the manager saw so far.
    struct Log: Sendable {
        var values: [BluetoothUUID: Data] = [OwnPeripheralLayout.readWrite: OwnPeripheralLayout.initialValue]
        var requests: [SeenRequest] = []
        /// `subscribed` events, with the central BlueZ named (AcquireNotify names it).
        var subscribed: [(characteristic: BluetoothUUID, central: CentralID?)] = []
        var unsubscribed: [BluetoothUUID] = []
        var confirmations: [BluetoothUUID: Int] = [:]
    }

    let manager: PeripheralManager
    let id: PeripheralID
    /// The central (hci0) as the manager names it: its address on hci1.
    let central: CentralID
    private let log = PosixMutex(Log())
    private let tasks = PosixMutex<[Task<Void, Never>]>([])
    private let readvertising = PosixMutex<Task<Void, Never>?>(nil)
    private let dropper: @Sendable () async throws -> Void

    private init(
        manager: PeripheralManager, id: PeripheralID, central: CentralID,
        dropper: @escaping @Sendable () async throws -> Void
    ) {
        self.manager = manager
        self.id = id
        self.central = central
        self.dropper = dropper
    }

    /// Publishes the layout on `adapter` of `bus` and advertises it. `readvertising` re-registers
    /// the advertisement every half second: btvirt sends an advertising report only when
    /// advertising (or scanning) is switched on, never periodically, so without it a central
    /// whose scan started after the registration would not hear the peripheral until the
    /// kernel restarts LE discovery (about 10 s later); a real controller advertises every few
    /// milliseconds. peripheral.py does the same for its own advertisement. It goes on while
    /// the central connects: the kernel connects to an LE device only once its passive scan
    /// has a report from it, so a connect waits for the next re-registration (stopping
    /// them at connect time made three connects in eight time out).
    static func start(
        bus: Bus, adapter: String, id: PeripheralID, central: CentralID, readvertising: Bool,
        l2capTransport: any L2CAPTransport = KernelL2CAPTransport(),
        dropper: @escaping @Sendable () async throws -> Void
    ) async throws -> OwnPeripheral {
        var options = PeripheralManagerOptions()
        options.l2capTransport = l2capTransport
        let manager = try await PeripheralManager(bus: bus, adapter: adapter, options: options)
        let peripheral = OwnPeripheral(manager: manager, id: id, central: central, dropper: dropper)
        do {
            try await manager.waitUntilPoweredOn(timeout: .seconds(20))
            peripheral.follow(manager.events)
            peripheral.serve(manager.requests)
            try await manager.add(OwnPeripheralLayout.mutableService)
            try await startAdvertising(manager)
            if readvertising { peripheral.readvertise() }
            return peripheral
        } catch {
            await peripheral.close()
            throw error
        }
    }

    /// Advertises; while bluetoothd still holds the previous test's advertisement (its release
    /// after an unregistration or a client leaving the bus completes asynchronously, and hci1
    /// has few instances), `NotPermitted` "Maximum advertisements reached" is asked again.
    private static func startAdvertising(_ manager: PeripheralManager) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            do {
                return try await manager.startAdvertising(OwnPeripheralLayout.advertisement)
            } catch let error where error.dbusErrorName == "org.bluez.Error.NotPermitted" {
                guard ContinuousClock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    /// Stops serving and closes the manager (its registrations go). The tasks are waited for,
    /// so that no re-registration of the advertisement lands after the close.
    func close() async {
        for task in tasks.withLock({ $0 }) { task.cancel() }
        await readvertising.withLock({ $0 })?.value
        await manager.close()
    }

    /// What the manager saw so far.
    var seen: Log { log.withLock { $0 } }

    private func add(_ task: Task<Void, Never>) { tasks.withLock { $0.append(task) } }

    private func serve(_ requests: AsyncStream<PeripheralRequest>) {
        add(
            Task { [self] in
                for await request in requests {
                    let seen = SeenRequest(
                        kind: request.kind, characteristic: request.characteristic, central: request.central,
                        value: request.value, writeType: request.writeType)
                    let answer = self.log.withLock { log -> Data? in
                        log.requests.append(seen)
                        let current = log.values[request.characteristic] ?? Data()
                        guard request.offset <= current.count else { return nil }
                        switch request.kind {
                        case .read: return Data(current.dropFirst(request.offset))
                        case .write:
                            log.values[request.characteristic] = current.prefix(request.offset) + request.value
                            return Data()
                        }
                    }
                    if let answer { request.respond(with: answer) } else { request.respond(with: .invalidOffset) }
                }
            })
    }

    private func follow(_ events: AsyncStream<PeripheralManagerEvent>) {
        add(
            Task { [self] in
                for await event in events {
                    self.log.withLock { log in
                        switch event {
                        case .subscribed(let characteristic, let central):
                            log.subscribed.append((characteristic, central))
                        case .unsubscribed(let characteristic, _): log.unsubscribed.append(characteristic)
                        case .indicationConfirmed(let characteristic):
                            log.confirmations[characteristic, default: 0] += 1
                        default: break
                        }
                    }
                }
            })
    }

    private func readvertise() {
        let task = Task { [manager] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(500))
                guard !Task.isCancelled else { return }
                // A failure (the controller busy, every instance taken) is retried next time.
                try? await manager.startAdvertising(OwnPeripheralLayout.advertisement)
            }
        }
        add(task)
        readvertising.withLock { $0 = task }
    }

    func waitUntilSubscribed(_ characteristic: BluetoothUUID) async throws {
        let manager = self.manager
        try await waitUntil("the manager seeing the subscription to \(characteristic)") {
            await manager.isNotifying(characteristic)
        }
    }

    /// Notifications go through ``PeripheralManager/updateValue(_:for:in:onSubscribedCentrals:timeout:)``
    /// (back-pressure on the notify channel); each indication waits for its confirmation
    /// before the next, as an app that cares about delivery would.
    func send(_ values: [Data], from characteristic: BluetoothUUID) async throws {
        let indicates = characteristic == OwnPeripheralLayout.indicating
        for value in values {
            let confirmed = seen.confirmations[characteristic, default: 0]
            try await manager.updateValue(value, for: characteristic, in: OwnPeripheralLayout.service)
            guard indicates else { continue }
            try await waitUntil("the confirmation of an indication of \(characteristic)") {
                self.log.withLock { $0.confirmations[characteristic, default: 0] } > confirmed
            }
        }
    }

    func value(of characteristic: BluetoothUUID) async throws -> Data {
        seen.values[characteristic] ?? Data()
    }

    func dropLink() async throws { try await dropper() }
}
