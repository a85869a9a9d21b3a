import BLE
import Foundation

/// What the SDK does while both daemons are recorded: the suite's steps in one run, each
/// waited for in the conversation itself before the next starts, so that the order of the
/// trace is the daemon's answer and not the machine's speed.
enum TraceScenario {
    /// Plays the scenario on `stage` and returns its trace.
    static func record(_ stage: Stage) async throws -> [String] {
        let recording = try await TraceRecording(stage)
        defer { recording.monitor.stop() }
        let central = try await stage.central()
        try await powerCycle(central, recording)
        try await scan(central, stage.driver.id, recording)
        let connecting = recording.lines.count
        let peripheral = try await central.connect(stage.driver.id, timeout: .seconds(30))
        try await recording.waitFor("ServicesResolved: b=true", from: connecting)
        try await readAndWrite(stage, peripheral, recording)
        try await notify(stage, peripheral, recording)
        try await forbiddenOperations(stage, peripheral)
        let mark = recording.lines.count
        try await peripheral.disconnect()
        try await recording.waitFor("Connected: b=false", from: mark)
        try await recording.waitFor("ServicesResolved: b=false", from: mark)
        let closing = recording.lines.count
        await central.close()
        // The SDK's filter leaves with it: `discovery_disconnect` announces Discovering=false
        // although no discovery runs (after the close, so wait for it before the end marker).
        try await recording.waitFor("Discovering: b=false", from: closing)
        return try await recording.finish()
    }

    private static func powerCycle(_ central: Central, _ recording: TraceRecording) async throws {
        let states = central.states
        try await central.setPowered(false)
        _ = try await within(.seconds(20), "poweredOff") {
            for await state in states where state == .poweredOff { return state }
            throw StageError(description: "the state stream ended")
        }
        let mark = recording.lines.count
        try await central.setPowered(true)
        try await central.waitUntilPoweredOn(timeout: .seconds(20))
        try await recording.waitFor("Powered: b=true", from: mark)
    }

    /// A scan for the test service until it finds the peripheral; then the scan ends.
    private static func scan(_ central: Central, _ id: PeripheralID, _ recording: TraceRecording) async throws {
        let mark = recording.lines.count
        try await within(.seconds(30), "a scan finding \(id)") {
            for try await discovery in central.scan(services: [TestPeripheralLayout.service]) where discovery.id == id {
                return
            }
            throw StageError(description: "the scan ended")
        }
        try await recording.waitFor("Discovering: b=false", from: mark)
    }

    private static func readAndWrite(_ stage: Stage, _ peripheral: Peripheral, _ recording: TraceRecording)
        async throws
    {
        let readWrite = try await stage.characteristic(TestPeripheralLayout.readWrite, of: peripheral)
        _ = try await readWrite.read()
        try await readWrite.write(Data("with response".utf8), type: .withResponse)
        let command = try await stage.characteristic(TestPeripheralLayout.writeWithoutResponse, of: peripheral)
        try await command.write(Data("without response".utf8), type: .withoutResponse)
        try await stage.waitForValue(Data("without response".utf8), in: TestPeripheralLayout.writeWithoutResponse)
    }

    /// Subscribes, receives three notifications, unsubscribes.
    private static func notify(_ stage: Stage, _ peripheral: Peripheral, _ recording: TraceRecording) async throws {
        let uuid = TestPeripheralLayout.notifying
        let values = (1...3).map { Data("notification \($0)".utf8) }
        let mark = recording.lines.count
        let received = try await AgainstBluetoothd.NotificationTests.roundTrip(stage, uuid, values) {
            try await stage.characteristic(uuid, of: peripheral).subscribe()
        }
        guard received == values else { throw StageError(description: "received \(received), sent \(values)") }
        try await recording.waitFor("reply GattCharacteristic1.StopNotify", from: mark)
    }

    /// Operations the characteristics' flags forbid: whether the daemon refuses them, and
    /// with which error name, is what the trace compares (so their outcome is not checked here).
    private static func forbiddenOperations(_ stage: Stage, _ peripheral: Peripheral) async throws {
        let readWrite = try await stage.characteristic(TestPeripheralLayout.readWrite, of: peripheral)
        let notifying = try await stage.characteristic(TestPeripheralLayout.notifying, of: peripheral)
        _ = try? await notifying.write(Data([1]), type: .withResponse)
        _ = try? await readWrite.write(Data([1]), type: .withoutResponse)
        _ = try? await readWrite.subscribe()
    }
}
