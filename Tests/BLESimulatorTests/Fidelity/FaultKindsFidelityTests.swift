import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// The fault operations that used to be accepted and never act: disconnect, acquire, the
/// non-`fail` actions of startNotify and startDiscovery, and a discovery fault's address
/// (bluez-dbus-api.md §4.4, §4.7, §10.13).
@Suite("Fidelity: every fault kind acts", .timeLimit(.minutes(1)))
struct FaultKindsFidelityTests {
    private static let characteristic = BlueZInterface.gattCharacteristic1
    private static let noOptions = DBusValue.dictionary(key: .string, value: .variant, [])
    private static let adapterAddress = "00:1A:7D:DA:71:13"

    @Test(
        "Disconnect faults: fail keeps the link, dropLink loses it at once (reason timeout)",
        arguments: Release.allCases)
    func disconnectFaults(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            simulator.inject(
                SimulatedFault(
                    .disconnect, address: Peripherals.sensorAddress,
                    action: .fail(name: BlueZErrorName.notReady, message: BlueZErrorMessage.notReady)))
            let refused = await client.error(Paths.sensor, BlueZInterface.device1, "Disconnect")
            expectError(refused, BlueZErrorName.notReady, BlueZErrorMessage.notReady)
            #expect(try await client.get(Paths.sensor, BlueZInterface.device1, "Connected") == .boolean(true))
            simulator.inject(SimulatedFault(.disconnect, action: .dropLink))
            let mark = client.transcript.mark
            try await client.call(Paths.sensor, BlueZInterface.device1, "Disconnect")
            try await client.waitForDisconnected(since: mark)
            if release == .bluez587 {
                let reason = client.transcript.since(mark).first { $0.member == "Disconnected" }
                #expect(reason?.body.first == .string("org.bluez.Reason.Timeout"))
            }
        }
    }

    @Test(
        "Disconnect faults: noReply leaves the call to the client's timeout, the link stays",
        arguments: Release.allCases)
    func disconnectNoReply(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            simulator.inject(SimulatedFault(.disconnect, action: .noReply))
            let timedOut = await client.error(
                Paths.sensor, BlueZInterface.device1, "Disconnect", timeout: .milliseconds(300))
            #expect(timedOut?.code == .timeout)
            #expect(try await client.get(Paths.sensor, BlueZInterface.device1, "Connected") == .boolean(true))
        }
    }

    @Test(
        "StartNotify faults: an ATT error on the CCC write is mapped, the session is not kept",
        arguments: Release.allCases)
    func startNotifyATTError(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            simulator.inject(SimulatedFault(.startNotify, characteristic: UUIDs.measurement, action: .attError(0x05)))
            let error = await client.error(Paths.measurement, Self.characteristic, "StartNotify")
            expectError(error, BlueZErrorName.notPermitted, BlueZErrorMessage.notPaired)
            #expect(try await client.get(Paths.measurement, Self.characteristic, "Notifying") == .boolean(false))
            // Nothing was kept: StopNotify has no session to end.
            let stop = await client.error(Paths.measurement, Self.characteristic, "StopNotify")
            expectError(stop, BlueZErrorName.failed, BlueZErrorMessage.noNotifySessionStarted)
        }
    }

    @Test(
        "StartNotify faults: a delayed CCC write answers later, a repeat meanwhile is InProgress; dropLink fails with 0x0e",
        arguments: Release.allCases)
    func startNotifyDelayAndDrop(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            simulator.inject(SimulatedFault(.startNotify, action: .delay(.seconds(2))))
            let pending = try await client.startPending(Paths.measurement, Self.characteristic, "StartNotify")
            let repeated = await client.error(Paths.measurement, Self.characteristic, "StartNotify")
            expectError(repeated, BlueZErrorName.inProgress, BlueZErrorMessage.inProgress)
            if case .failure(let error) = await pending.value { Issue.record("delayed StartNotify failed: \(error)") }
            #expect(try await client.get(Paths.measurement, Self.characteristic, "Notifying") == .boolean(true))
            simulator.inject(SimulatedFault(.startNotify, characteristic: UUIDs.data, action: .dropLink))
            let mark = client.transcript.mark
            let dropped = await client.error(Paths.data, Self.characteristic, "StartNotify")
            expectError(dropped, BlueZErrorName.failed, BlueZErrorMessage.attErrorPrefix + "0e")
            try await client.waitForDisconnected(since: mark)
        }
    }

    @Test(
        "AcquireNotify faults: fail and delay act; a CCC ATT error is mapped on 5.87 and never answered on 5.66",
        arguments: Release.allCases)
    func acquireNotifyFaults(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            simulator.inject(
                SimulatedFault(
                    .acquire, characteristic: UUIDs.measurement,
                    action: .fail(name: BlueZErrorName.failed, message: BlueZErrorMessage.failedToSubscribe)))
            let failed = await client.error(Paths.measurement, Self.characteristic, "AcquireNotify", [Self.noOptions])
            expectError(failed, BlueZErrorName.failed, BlueZErrorMessage.failedToSubscribe)
            simulator.inject(SimulatedFault(.acquire, action: .attError(0x0e)))
            let cccError = await client.error(
                Paths.measurement, Self.characteristic, "AcquireNotify", [Self.noOptions],
                timeout: .milliseconds(500))
            if release == .bluez587 {
                expectError(cccError, BlueZErrorName.failed, BlueZErrorMessage.attErrorPrefix + "0e")
            } else {
                #expect(cccError?.code == .timeout)
            }
            simulator.inject(SimulatedFault(.acquire, action: .delay(.milliseconds(200))))
            let started = ContinuousClock.now
            let body = try await client.call(
                Paths.measurement, Self.characteristic, "AcquireNotify", [Self.noOptions])
            // A lower bound only: a delayed answer never comes early, and load only delays it.
            #expect(ContinuousClock.now - started >= .milliseconds(200))
            guard case .unixFD(let descriptor)? = body.first else {
                Issue.record("AcquireNotify answered \(body)")
                return
            }
            descriptor.close()
        }
    }

    @Test("AcquireWrite faults: fail acts, dropLink loses the link", arguments: Release.allCases)
    func acquireWriteFaults(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            simulator.inject(
                SimulatedFault(
                    .acquire, characteristic: UUIDs.command,
                    action: .fail(name: BlueZErrorName.notAuthorized, message: BlueZErrorMessage.notAuthorized)))
            let failed = await client.error(Paths.command, Self.characteristic, "AcquireWrite", [Self.noOptions])
            expectError(failed, BlueZErrorName.notAuthorized, BlueZErrorMessage.notAuthorized)
            #expect(try await client.get(Paths.command, Self.characteristic, "WriteAcquired") == .boolean(false))
            simulator.inject(SimulatedFault(.acquire, action: .dropLink))
            let mark = client.transcript.mark
            let dropped = await client.error(Paths.command, Self.characteristic, "AcquireWrite", [Self.noOptions])
            #expect(dropped != nil)
            try await client.waitForDisconnected(since: mark)
        }
    }

    @Test(
        "StartDiscovery faults match the adapter's address; delay answers later, noReply never",
        arguments: Release.allCases)
    func startDiscoveryFaults(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            // Another adapter's address: not this one's fault.
            simulator.inject(
                SimulatedFault(
                    .startDiscovery, address: "11:22:33:44:55:66",
                    action: .fail(name: BlueZErrorName.failed, message: "elsewhere")))
            simulator.inject(
                SimulatedFault(
                    .startDiscovery, address: Self.adapterAddress,
                    action: .fail(name: BlueZErrorName.notReady, message: BlueZErrorMessage.notReady)))
            let refused = await client.error(Paths.adapter, BlueZInterface.adapter1, "StartDiscovery")
            expectError(refused, BlueZErrorName.notReady, BlueZErrorMessage.notReady)
            simulator.clearFaults()
            simulator.inject(SimulatedFault(.startDiscovery, action: .noReply))
            let timedOut = await client.error(
                Paths.adapter, BlueZInterface.adapter1, "StartDiscovery", timeout: .milliseconds(300))
            #expect(timedOut?.code == .timeout)
            #expect(try await client.get(Paths.adapter, BlueZInterface.adapter1, "Discovering") == .boolean(false))
            simulator.inject(SimulatedFault(.startDiscovery, action: .delay(.milliseconds(200))))
            let mark = client.transcript.mark
            let started = ContinuousClock.now
            try await client.call(Paths.adapter, BlueZInterface.adapter1, "StartDiscovery")
            // A lower bound only: a delayed answer never comes early, and load only delays it.
            #expect(ContinuousClock.now - started >= .milliseconds(200))
            try await client.transcript.first("Discovering=true", since: mark) {
                $0.isPropertiesChanged(Paths.adapter, BlueZInterface.adapter1)
                    && $0.changedProperties["Discovering"] == .boolean(true)
            }
        }
    }
}
