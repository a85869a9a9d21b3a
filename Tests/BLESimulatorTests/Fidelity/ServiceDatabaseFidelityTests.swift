import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// Which of a peer's services bluetoothd exports (claimed services, bluez-dbus-api.md §4.1,
/// Scenarios/README.md "Claimed services") and how a change of the peer's database reaches a
/// connected client (Service Changed, §4.1, §10.10).
@Suite("Fidelity: claimed services and Service Changed", .timeLimit(.minutes(1)))
struct ServiceDatabaseFidelityTests {
    private static let characteristic = BlueZInterface.gattCharacteristic1
    private static let third = Paths.path(Paths.sensor.rawValue + "/service000a")
    private static let thirdCharacteristic = Paths.path(third.rawValue + "/char000b")

    /// The standard services (GAP `1800`, Generic Attribute `1801` with Service Changed), then
    /// `third` at 0x000a; without `serviceChanged` the peer has no standard services.
    private static func peripheral(serviceChanged: Bool = true, third: VirtualService) -> VirtualPeripheral {
        var peripheral = VirtualPeripheral(address: Peripherals.sensorAddress, name: "HRM", services: [third])
        if !serviceChanged { peripheral.standardServices = nil }
        peripheral.advertisingIntervalMs = 20
        return peripheral
    }

    private static let heartRate = VirtualService(
        uuid: "180D", characteristics: [VirtualCharacteristic(uuid: "2A38", flags: ["read"], value: [0x01])])
    private static let battery = VirtualService(
        uuid: "180F", characteristics: [VirtualCharacteristic(uuid: "2A19", flags: ["read"], value: [0x50])])

    private static func uuids(_ short: [String]) -> DBusValue {
        .array(.string, short.compactMap(BlueZUUID.canonical).sorted().map { .string($0) })
    }

    @Test("5.66 hides the claimed standard GAP service but lists it in UUIDs; 1801 is exported")
    func claimedHiddenOn566() async throws {
        try await Fidelity.run(.bluez566, peripherals: [Self.peripheral(third: Self.heartRate)]) { _, client, _ in
            try await client.connectSensor()
            let objects = try await client.managedObjects()
            #expect(objects.interfaces(Paths.genericAccess).isEmpty)
            #expect(objects.interfaces(Paths.deviceName).isEmpty)
            #expect(objects.interfaces(Paths.serviceChanged).contains(Self.characteristic.rawValue))
            #expect(objects.interfaces(Self.thirdCharacteristic).contains(Self.characteristic.rawValue))
            #expect(
                try await client.get(Paths.sensor, BlueZInterface.device1, "UUIDs")
                    == Self.uuids(["1800", "1801", "180D"]))
        }
    }

    @Test("5.87 exports claimed services read-only: reads work, WriteValue is NotAuthorized")
    func claimedReadOnlyOn587() async throws {
        try await Fidelity.run(.bluez587, peripherals: [Self.peripheral(third: Self.heartRate)]) { _, client, _ in
            try await client.connectSensor()
            let noOptions = DBusValue.dictionary(key: .string, value: .variant, [])
            let name = try await client.call(Paths.deviceName, Self.characteristic, "ReadValue", [noOptions])
            #expect(name == [.bytes(Data("HRM".utf8))])
            let error = await client.error(
                Paths.deviceName, Self.characteristic, "WriteValue", [.bytes(Data("x".utf8)), noOptions])
            expectError(error, BlueZErrorName.notAuthorized, BlueZErrorMessage.notAuthorized)
        }
    }

    @Test(
        "Service Changed: a connected client sees the changed service removed and added, and new UUIDs",
        arguments: Release.allCases)
    func servicesChangeWhileConnected(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Self.peripheral(third: Self.heartRate)]) { simulator, client, _ in
            try await client.connectSensor()
            let mark = client.transcript.mark
            try simulator.updatePeripheral(address: Peripherals.sensorAddress) { $0.services[0] = Self.battery }
            try await client.transcript.first("UUIDs changed", since: mark) {
                $0.isPropertiesChanged(Paths.sensor, BlueZInterface.device1) && $0.changedProperties["UUIDs"] != nil
            }
            let objectSignals = client.transcript.lines(since: mark, kinds: [.signal]).filter {
                !$0.contains("PropertiesChanged")
            }
            #expect(
                objectSignals == [
                    Trace.removed(Self.thirdCharacteristic, Trace.gdbus(Self.characteristic)),
                    Trace.removed(Self.third, Trace.gdbus(BlueZInterface.gattService1)),
                    Trace.added(Self.third, Trace.gdbus(BlueZInterface.gattService1)),
                    Trace.added(Self.thirdCharacteristic, Trace.gdbus(Self.characteristic)),
                ])
            #expect(
                try await client.get(Self.thirdCharacteristic, Self.characteristic, "UUID")
                    == .string(BlueZUUID.canonical("2A19") ?? ""))
            #expect(
                try await client.get(Paths.sensor, BlueZInterface.device1, "UUIDs")
                    == Self.uuids(["1800", "1801", "180F"]))
            #expect(try await client.get(Paths.sensor, BlueZInterface.device1, "ServicesResolved") == .boolean(true))
            // The new characteristic serves the new value.
            let noOptions = DBusValue.dictionary(key: .string, value: .variant, [])
            let level = try await client.call(Self.thirdCharacteristic, Self.characteristic, "ReadValue", [noOptions])
            #expect(level == [.bytes(Data([0x50]))])
        }
    }

    @Test(
        "Without Service Changed (no standard services) the connected client keeps its (stale) objects",
        arguments: Release.allCases)
    func staleCacheWithoutServiceChanged(release: Release) async throws {
        let peripheral = Self.peripheral(serviceChanged: false, third: Self.heartRate)
        try await Fidelity.run(release, peripherals: [peripheral]) { simulator, client, _ in
            try await client.connectSensor()
            let mark = client.transcript.mark
            try simulator.updatePeripheral(address: Peripherals.sensorAddress) { $0.services[0] = Self.battery }
            try await client.settle()
            #expect(client.transcript.since(mark).allSatisfy { $0.member != "InterfacesRemoved" })
            #expect(
                try await client.get(Self.thirdCharacteristic, Self.characteristic, "UUID")
                    == .string(BlueZUUID.canonical("2A38") ?? ""))
        }
    }
}
