import BLE
import BLESimulator
import Foundation
import Testing

/// Regression: a `disconnect()` that bluetoothd refused or never answered left the peripheral
/// in `.disconnecting` for good, so every later operation failed with `notConnected` although
/// the link was up.
@Suite("A failed disconnect", .timeLimit(.minutes(1)))
struct FailedDisconnectTests {
    static let hrm = SimulatorFixture.heartRateAddress

    static func isDisconnect(_ event: ConnectionEvent) -> Bool {
        if case .disconnected = event { return true }
        return false
    }

    /// The peripheral is connected and works: a read succeeds, then a second disconnect closes
    /// the link with a local disconnection.
    static func expectStillUsable(_ peripheral: Peripheral) async throws {
        #expect(await peripheral.state == .connected)
        #expect(await peripheral.isConnected)
        let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
        #expect(try await location.read() == Data([0x01]))
        let events = peripheral.events
        try await peripheral.disconnect()
        #expect(try await first(events, where: Self.isDisconnect) == .disconnected(.local))
        #expect(await peripheral.state == .disconnected)
    }

    @Test("an error reply leaves the peripheral connected and usable")
    func errorReply() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected()
            fixture.simulator.inject(
                SimulatedFault(
                    .disconnect, address: Self.hrm, action: .fail(name: "org.bluez.Error.Failed", message: "busy")))
            let error = await bleError { try await peripheral.disconnect() }
            #expect(error?.dbusErrorName == "org.bluez.Error.Failed")
            try await Self.expectStillUsable(peripheral)
            await central.close()
        }
    }

    @Test("an unanswered Disconnect times out and leaves the peripheral connected and usable")
    func noReply() async throws {
        try await SimulatorFixture.run { fixture in
            var options = CentralOptions()
            options.callTimeout = .seconds(3)
            let (central, peripheral) = try await fixture.connected(options: options)
            fixture.simulator.inject(SimulatedFault(.disconnect, address: Self.hrm, action: .noReply))
            let error = await bleError { try await peripheral.disconnect() }
            #expect(error?.code == .timeout)
            try await Self.expectStillUsable(peripheral)
            await central.close()
        }
    }

    @Test("a Disconnect cancelled by its task leaves the peripheral connected")
    func cancelled() async throws {
        try await SimulatorFixture.run { fixture in
            let recorder = LogRecorder()
            let (central, peripheral) = try await fixture.connected(options: tracing(recorder))
            fixture.simulator.inject(SimulatedFault(.disconnect, address: Self.hrm, action: .noReply))
            let disconnect = Task { try await peripheral.disconnect() }
            try await recorder.waitFor("Device1.Disconnect")
            // The Disconnect must reach bluetoothd (and use up the fault) before it is cancelled.
            try await handledByBluetoothd(central)
            disconnect.cancel()
            #expect(await bleError { try await disconnect.value }?.code == .cancelled)
            try await Self.expectStillUsable(peripheral)
            await central.close()
        }
    }
}
