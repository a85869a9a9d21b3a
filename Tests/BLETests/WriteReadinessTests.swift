import BLESimulator
import DBusTestSupport
import Foundation
import Testing

@testable import BLE

/// Writes without response against a full window, on a private bus with the simulator holding
/// bluetoothd's answers back: readiness follows the window, a write past it waits its turn
/// (cancellable, timed from its call), and the readiness stream says when room comes back.
@Suite("Write without response: readiness and the full window", .timeLimit(.minutes(1)))
struct WriteReadinessTests {
    static let sensor = TestPeripherals.sensorAddress

    /// A central with a window of two writes, connected, and the sensor's control point, with
    /// the simulator holding back the answers to the next two writes until `release`.
    static func withFullWindow(
        _ body: @escaping (SimulatorFixture, Peripheral, Characteristic, [Task<Void, any Error>]) async throws -> Void
    ) async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            var options = CentralOptions()
            options.writeWithoutResponseWindow = 2
            let (central, peripheral) = try await fixture.connected(Self.sensor, options: options)
            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            #expect(peripheral.canSendWriteWithoutResponse, "connected, nothing in flight")
            fixture.simulator.inject(
                SimulatedFault(.write, address: Self.sensor, action: .delay(.seconds(20)), count: 2))
            var inFlight: [Task<Void, any Error>] = []
            for byte in UInt8(1)...2 {
                // One after the other, so that they reach the peripheral in this order.
                inFlight.append(
                    Task { try await control.write(Data([byte]), type: .withoutResponse, timeout: .seconds(30)) })
                try await eventually("write \(byte) is held by the simulator") {
                    fixture.simulator.delayedActions == Int(byte)
                }
            }
            #expect(!peripheral.canSendWriteWithoutResponse, "the window is full")
            try await body(fixture, peripheral, control, inFlight)
            for write in inFlight { try await write.value }
            await central.close()
        }
    }

    @Test("a write past the full window waits its turn, then goes; the readiness stream says when room is back")
    func waitsThenGoes() async throws {
        try await Self.withFullWindow { fixture, peripheral, control, _ in
            var ready = peripheral.readyToSendWriteWithoutResponse.makeAsyncIterator()
            let third = Task { try await control.write(Data([3]), type: .withoutResponse, timeout: .seconds(30)) }
            try await eventually("the third write waits its turn") { peripheral.client.queuedCount == 1 }
            try await third.value
            // Answered after the held two, in order: the peripheral has the last one written.
            #expect(try fixture.simulator.value(address: Self.sensor, characteristic: "2A39") == Data([3]))
            await ready.next()
            #expect(peripheral.canSendWriteWithoutResponse)
        }
    }

    @Test("a write waiting for the window is cancelled at once; one past its deadline times out unsent")
    func waitingWriteCancelledOrTimedOut() async throws {
        try await Self.withFullWindow { fixture, peripheral, control, inFlight in
            let cancelled = Task { try await control.write(Data([7]), type: .withoutResponse, timeout: .seconds(30)) }
            try await eventually("the write waits its turn") { peripheral.client.queuedCount == 1 }
            cancelled.cancel()
            #expect(await bleError { try await cancelled.value }?.code == .cancelled)
            let timedOut = Task {
                try await control.write(Data([8]), type: .withoutResponse, timeout: .milliseconds(50))
            }
            #expect(await bleError { try await timedOut.value }?.code == .timeout)
            for write in inFlight { try await write.value }
            // Neither of the two was ever written.
            #expect(try fixture.simulator.value(address: Self.sensor, characteristic: "2A39") == Data([2]))
        }
    }
}
