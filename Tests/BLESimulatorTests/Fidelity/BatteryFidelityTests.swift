import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// bluetoothd's battery plugin on a peer with a Battery Service: `org.bluez.Battery1` on the
/// device next to the GATT objects (bluez-dbus-api.md §1.3, §14; Scenarios/README.md
/// "Claimed services"; `profiles/battery/battery.c`).
@Suite("Fidelity: Battery1", .timeLimit(.minutes(1)))
struct BatteryFidelityTests {
    private static let level = Paths.path(Paths.sensor.rawValue + "/service0030/char0031")

    /// The sensor with a Battery Service at 0x0030 whose Battery Level has `flags`.
    private static func sensor(levelFlags flags: [String] = ["read", "notify"]) -> VirtualPeripheral {
        var sensor = Peripherals.sensor()
        sensor.services.append(
            VirtualService(
                uuid: "180F", characteristics: [VirtualCharacteristic(uuid: "2A19", flags: flags, value: [100])]))
        return sensor
    }

    @Test(
        "Battery1 appears once services resolve, follows notifications without a D-Bus session, goes with the link",
        arguments: Release.allCases)
    func batteryInterface(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Self.sensor()]) { simulator, client, _ in
            let mark = client.transcript.mark
            try await client.connectSensor()
            let added = try await client.transcript.first("Battery1 added", since: mark) {
                $0.member == "InterfacesAdded" && $0.objectManagerSubject == Paths.sensor
                    && $0.objectManagerInterfaces.contains(BlueZInterface.battery1.rawValue)
            }
            #expect(added.objectManagerInterfaces == [BlueZInterface.battery1.rawValue])
            #expect(
                added.addedProperties(of: BlueZInterface.battery1)
                    == ["Percentage": .byte(100), "Source": .string("GATT Battery Service")])
            // The GATT objects are there too, and no D-Bus client subscribed.
            #expect(
                try await client.get(Self.level, BlueZInterface.gattCharacteristic1, "Notifying") == .boolean(false))
            let notified = client.transcript.mark
            try simulator.notify(address: Peripherals.sensorAddress, characteristic: "2A19", value: Data([90]))
            try await client.transcript.first("Percentage 90", since: notified) {
                $0.isPropertiesChanged(Paths.sensor, BlueZInterface.battery1)
                    && $0.changedProperties["Percentage"] == .byte(90)
            }
            #expect(client.transcript.since(notified).allSatisfy { $0.path != Self.level })
            let disconnect = client.transcript.mark
            try await client.call(Paths.sensor, BlueZInterface.device1, "Disconnect")
            let removed = try await client.transcript.first("Battery1 removed", since: disconnect) {
                $0.member == "InterfacesRemoved" && $0.objectManagerSubject == Paths.sensor
            }
            #expect(removed.objectManagerInterfaces == [BlueZInterface.battery1.rawValue])
        }
    }

    @Test(
        "No Battery1 when the Battery Level cannot be notified (the plugin's CCC write fails)",
        arguments: Release.allCases)
    func noBatteryWithoutNotify(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Self.sensor(levelFlags: ["read"])]) { _, client, _ in
            try await client.connectSensor()
            try await client.settle()
            let objects = try await client.managedObjects()
            #expect(!objects.interfaces(Paths.sensor).contains(BlueZInterface.battery1.rawValue))
            #expect(objects.interfaces(Self.level).contains(BlueZInterface.gattCharacteristic1.rawValue))
        }
    }
}
