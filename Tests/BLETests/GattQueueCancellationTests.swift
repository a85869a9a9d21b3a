import BLESimulator
import DBus
import DBusTestSupport
import Foundation
import Synchronization
import Testing

@testable import BLE

/// The GATT operation queue on a real private bus with the simulator: a queued operation can be
/// cancelled and times out by its own deadline, counted from the call, without disturbing the
/// operation ahead of it; and a connection reads no more than the connected device.
@Suite("GATT queue: cancellation and deadlines of queued operations", .timeLimit(.minutes(1)))
struct GattQueueCancellationTests {
    static let sensor = TestPeripherals.sensorAddress

    /// A slow write in flight (held by the simulator until `release`), and a second operation
    /// queued behind it once the SDK counts its caller suspended.
    static func withSlowWrite(
        _ body: @escaping (SimulatorFixture, Central, Characteristic, WriteProgress, LogRecorder) async throws -> Void
    ) async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            let recorder = LogRecorder()
            let (central, peripheral) = try await fixture.connected(Self.sensor, options: tracing(recorder))
            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            fixture.simulator.inject(SimulatedFault(.write, address: Self.sensor, action: .delay(.seconds(5))))
            let progress = WriteProgress()
            let write = Task {
                try await control.write(Data([0x07]), timeout: .seconds(30))
                progress.done.store(true, ordering: .releasing)
            }
            try await recorder.waitFor("GattCharacteristic1.WriteValue")
            try await eventually("the simulator holds the write back") { fixture.simulator.delayedActions == 1 }
            try await body(fixture, central, control, progress, recorder)
            try await write.value
            #expect(fixture.simulator.delayedActions == 0, "the held reply went out")
            #expect(try fixture.simulator.value(address: Self.sensor, characteristic: "2A39") == Data([0x07]))
            await central.close()
        }
    }

    /// Waits until one more caller than `before` is suspended in the SDK.
    /// Waits until an operation waits its turn in the characteristic's peripheral's queue. (The
    /// central's count of suspended callers, used before, also counts waits that come and go,
    /// so one taken at the wrong moment hid the queued read under AddressSanitizer.)
    static func queued(_ characteristic: Characteristic) async throws {
        try await eventually("the operation waits in the queue") { characteristic.peripheral.client.queuedCount == 1 }
    }

    @Test("a read queued behind a slow write is cancelled at once; the write is unaffected")
    func cancelQueuedRead() async throws {
        try await Self.withSlowWrite { _, _, control, write, recorder in
            let read = Task { try await control.read(timeout: .seconds(30)) }
            try await Self.queued(control)
            read.cancel()
            #expect(await bleError { try await read.value }?.code == .cancelled)
            // Causal, not timed: the read ended while the write it queued behind still runs.
            #expect(!write.isDone, "the write is still in flight")
            #expect(recorder.count("ReadValue") == 0, "the read was never sent")
        }
    }

    @Test("a queued read's deadline counts from the call, not from when its turn comes")
    func queuedReadDeadline() async throws {
        try await Self.withSlowWrite { _, _, control, write, recorder in
            let error = await bleError { try await control.read(timeout: .milliseconds(100)) }
            #expect(error?.code == .timeout)
            #expect(!write.isDone, "it timed out while the write ahead of it still ran")
            #expect(recorder.count("ReadValue") == 0, "the read was never sent")
        }
    }

    @Test("a queued operation's wake-up is withdrawn once its turn came: no timer of the queue stays on the connection")
    func queuedWakeUpWithdrawn() async throws {
        try await Self.withSlowWrite { _, central, control, _, _ in
            let connection = await central.session.connection
            let before = await connection.scheduledCount()
            let read = Task { try await control.read(timeout: .seconds(30)) }
            try await Self.queued(control)
            // The queued read's deadline is a wake-up on the connection's loop.
            try await eventually("the queue's wake-up is set") { await connection.scheduledCount() == before + 1 }
            _ = try await read.value
            // Left set, it would stay until the read's deadline, 30 s after the call.
            try await eventually("the wake-up is withdrawn") { await connection.scheduledCount() == before }
        }
    }

    @Test("connecting with the mirror in place reads no GetManagedObjects, however many devices bluetoothd knows")
    func noTreeReadOnConnect() async throws {
        let crowd = (1...20).map { index in
            TestPeripherals.sensor(address: String(format: "C0:00:00:00:00:%02X", index))
        }
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()] + crowd) { fixture in
            let central = try await fixture.poweredCentral()
            let monitor = try BusMonitor(bus: .address(fixture.bus.address))
            defer { monitor.stop() }
            for _ in 0..<3 {
                let peripheral = try await central.connect(
                    try PeripheralID(address: Self.sensor), timeout: .seconds(10))
                #expect(try await !peripheral.discoverServices().isEmpty)
                try await peripheral.disconnect()
            }
            try await monitorCaughtUp(monitor, with: central)
            let reads = monitor.messages.filter {
                $0.kind == .methodCall && $0.member?.rawValue == "GetManagedObjects"
                    && $0.sender?.rawValue == central.diagnostics.connectionName
            }
            #expect(reads.isEmpty, "\(reads.count) GetManagedObjects calls")
            #expect(
                monitor.messages.contains {
                    $0.kind == .methodCall && $0.member?.rawValue == "Connect"
                        && $0.sender?.rawValue == central.diagnostics.connectionName
                })
            await central.close()
        }
    }
}

/// Whether the slow write has finished, for causal checks.
final class WriteProgress: Sendable {
    let done = Atomic<Bool>(false)
    var isDone: Bool { done.load(ordering: .acquiring) }
}
