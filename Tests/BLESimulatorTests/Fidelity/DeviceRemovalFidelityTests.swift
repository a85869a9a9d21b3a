import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// `Adapter1.RemoveDevice` and temporary devices with private addresses (bluez-dbus-api.md
/// §2.1, §2.4, §3.7, Q3, Q16).
@Suite("Fidelity: device removal", .timeLimit(.minutes(1)))
struct DeviceRemovalFidelityTests {
    private static func remove(_ client: RecordingClient, _ device: ObjectPath) async -> DBusError? {
        await client.error(Paths.adapter, BlueZInterface.adapter1, "RemoveDevice", [.objectPath(device)])
    }

    @Test(
        "RemoveDevice of an idle device: InterfacesRemoved, then the reply; a wrong path is DoesNotExist",
        arguments: Release.allCases)
    func removeIdle(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.discoverSensor()
            let missing = await Self.remove(client, Paths.path("/org/bluez/hci0/dev_00_11_22_33_44_55"))
            expectError(missing, BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist)
            let mark = client.transcript.mark
            #expect(await Self.remove(client, Paths.sensor) == nil)
            #expect(
                client.transcript.lines(since: mark, kinds: [.reply, .signal]) == [
                    Trace.removed(Paths.sensor, Trace.gdbus(BlueZInterface.device1)), Trace.reply("RemoveDevice"),
                ])
            let gone = await client.error(Paths.sensor, BlueZInterface.device1, "Connect")
            #expect(gone?.name == DBusError.StandardName.unknownObject)
        }
    }

    @Test(
        "RemoveDevice of a connected device: the disconnect trace, the reply, then every object goes; the cache with it",
        arguments: Release.allCases)
    func removeConnected(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            let mark = client.transcript.mark
            #expect(await Self.remove(client, Paths.sensor) == nil)
            try await client.transcript.first("device removed", since: mark) {
                $0.member == "InterfacesRemoved" && $0.objectManagerSubject == Paths.sensor
            }
            let lines = client.transcript.lines(since: mark, kinds: [.reply, .signal])
            let disconnect = ConnectFidelityTests.disconnectTrace(release, reason: .local)
            #expect(Array(lines.prefix(disconnect.count + 1)) == disconnect + [Trace.reply("RemoveDevice")])
            // Children first, each with its own InterfacesRemoved, the device last.
            let removed = lines.dropFirst(disconnect.count + 1)
            #expect(removed.count == ConnectFidelityTests.gattObjects(release).count + 1)
            #expect(removed.last == Trace.removed(Paths.sensor, Trace.gdbus(BlueZInterface.device1)))
            #expect(removed.allSatisfy { $0.hasPrefix("★ InterfacesRemoved") })
            // The GATT cache went too: the next connection exports the objects again.
            let again = client.transcript.mark
            try await client.connectSensor()
            #expect(client.transcript.since(again).filter { $0.objectManagerSubject == Paths.measurement }.count == 1)
        }
    }

    @Test(
        "A connected temporary device (private address) at StopDiscovery: 5.66 removes it, 5.87 keeps it",
        arguments: Release.allCases)
    func connectedTemporaryAtStop(release: Release) async throws {
        // 0x4A…: top bits 01, a resolvable private address; Connect leaves it temporary (§3.7).
        var rpa = Peripherals.sensor()
        rpa.address = "4A:00:00:00:00:07"
        rpa.addressType = "random"
        let path = Paths.path("/org/bluez/hci0/dev_4A_00_00_00_00_07")
        try await Fidelity.run(release, peripherals: [rpa]) { simulator, client, _ in
            try await client.startDiscovery()
            try await client.waitForDevice(path)
            try await client.connectAndResolve(path)
            // It stops being connectable while connected; StopDiscovery's cleanup then applies.
            try simulator.updatePeripheral(address: rpa.address) { $0.connectable = false }
            try await client.stopDiscovery()
            let present = try await client.managedObjects().objects[path] != nil
            #expect(present == (release == .bluez587))
        }
    }
}
