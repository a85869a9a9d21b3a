import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// bluetoothd restarting (bluez-dbus-api.md §4.1, §13.6, Q18).
@Suite("Fidelity: bluetoothd restart", .timeLimit(.minutes(1)))
struct RestartFidelityTests {
    @Test(
        "Restart: NameOwnerChanged old→\"\" then \"\"→new; a fresh tree with adapters and stored devices, no GATT objects",
        arguments: Release.allCases)
    func restartTrace(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor(), Peripherals.beacon()]) {
            simulator, client, _ in
            #expect(await client.setDiscoveryFilter(["Transport": .string("le")]) == nil)
            try await client.startDiscovery()
            try await client.waitForDevice(Paths.beacon)
            try await client.waitForDevice(Paths.sensor)
            try await client.connectAndResolve()
            try await client.call(Paths.measurement, BlueZInterface.gattCharacteristic1, "StartNotify")
            let old = try #require(simulator.uniqueName)
            let mark = client.transcript.mark
            try await simulator.restartDaemon()
            let fresh = try #require(simulator.uniqueName)
            #expect(old != fresh)
            let owners = try await client.transcript.count(2, "owner changes", since: mark) {
                $0.member == "NameOwnerChanged"
            }
            #expect(
                owners.map(\.description) == [
                    "★ NameOwnerChanged ('org.bluez', '\(old.rawValue)', '')",
                    "★ NameOwnerChanged ('org.bluez', '', '\(fresh.rawValue)')",
                ])
            let tree = try await client.managedObjects()
            #expect(tree.objects.keys.sorted() == [Paths.manager, Paths.adapter, Paths.sensor])
            let adapter = try #require(tree.properties(Paths.adapter, BlueZInterface.adapter1))
            #expect(adapter["Discovering"] == .boolean(false))
            #expect(adapter["Powered"] == .boolean(true))
            let device = try #require(tree.properties(Paths.sensor, BlueZInterface.device1))
            #expect(device["Connected"] == .boolean(false))
            #expect(device["RSSI"] == nil)
            // Stored with its resolved services (`Services=` in the info file).
            let services = [UUIDs.genericAccess, UUIDs.genericAttribute, UUIDs.heartRate, UUIDs.custom]
            #expect(device["UUIDs"] == .array(.string, services.map { .string($0) }))
            // Sessions are gone with the old daemon.
            let stop = await client.error(Paths.adapter, BlueZInterface.adapter1, "StopDiscovery")
            expectError(stop, BlueZErrorName.failed, BlueZErrorMessage.noDiscoveryStarted)
            // GATT objects come back with the next connection; subscriptions do not.
            try await client.connectAndResolve()
            #expect(
                try await client.get(Paths.measurement, BlueZInterface.gattCharacteristic1, "Notifying")
                    == .boolean(false))
            let stopNotify = await client.error(Paths.measurement, BlueZInterface.gattCharacteristic1, "StopNotify")
            expectError(stopNotify, BlueZErrorName.failed, BlueZErrorMessage.noNotifySessionStarted)
        }
    }

    @Test(
        "Calls while bluetoothd is away are answered by the bus; the old objects are gone", arguments: Release.allCases)
    func callsWhileAway(release: Release) async throws {
        try await Fidelity.run(release) { simulator, client, _ in
            simulator.stop()
            try await client.transcript.first("owner gone") { $0.member == "NameOwnerChanged" }
            let error = await client.error(Paths.adapter, BlueZInterface.adapter1, "StartDiscovery")
            #expect(error?.name == DBusError.StandardName.serviceUnknown)
        }
    }

    @Test(
        "Restart during a pending Connect: the call fails and the new daemon has the device disconnected",
        arguments: Release.allCases)
    func restartDuringConnect(release: Release) async throws {
        var options = SimulatorOptions()
        options.connectDelay = .seconds(30)
        try await Fidelity.run(release, options: options, peripherals: [Peripherals.sensor()]) {
            simulator, client, _ in
            try await client.discoverSensor()
            let pending = try await client.startPending(Paths.sensor, BlueZInterface.device1, "Connect")
            let mark = client.transcript.mark
            try await simulator.restartDaemon()
            guard case .failure(let error) = await pending.value else {
                Issue.record("the pending Connect succeeded")
                return
            }
            // An orderly shutdown cancels it; a crash would leave the bus to answer NoReply.
            #expect(
                error.name == BlueZErrorName.failed || error.name == DBusError.StandardName.noReply,
                "\(error)")
            try await client.transcript.count(2, "owner changes", since: mark) { $0.member == "NameOwnerChanged" }
            // Connect had made the device persistent.
            let device = try #require(
                try await client.managedObjects().properties(Paths.sensor, BlueZInterface.device1))
            #expect(device["Connected"] == .boolean(false))
        }
    }
}
