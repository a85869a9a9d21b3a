import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// The standard services of a peer and bluetoothd's gap plugin (`profiles/gap/gas.c`): it
/// reads the peer's Device Name and (for a device without one) Appearance, and what changed
/// is announced with `ServicesResolved`, as the real 5.66 daemon's trace shows
/// (Tests/RealBlueZTests/Traces): `UUIDs`, `ServicesResolved`, `Name`, `Alias`, `Appearance`, `Icon`.
@Suite("Fidelity: standard services and the gap plugin", .timeLimit(.minutes(1)))
struct GenericAccessFidelityTests {
    private static let device1 = BlueZInterface.device1
    private static let standardUUIDs = "'\(UUIDs.genericAccess)', '\(UUIDs.genericAttribute)'"

    /// A sensor whose standard services are `standard` (nil: none).
    private static func sensor(_ standard: StandardServices?, appearance: UInt16? = nil) -> VirtualPeripheral {
        var peripheral = Peripherals.sensor()
        peripheral.standardServices = standard
        peripheral.appearance = appearance
        return peripheral
    }

    /// The resolution signal: `ServicesResolved` and the plugin's changes (GVariant text), with
    /// the resolved UUIDs the first time.
    private static func resolved(_ changes: String, uuids: String? = nil) -> String {
        let first = uuids.map { "'UUIDs': <[\($0)]>, " } ?? ""
        let rest = changes.isEmpty ? "" : ", " + changes
        return Trace.changed(Paths.sensor, device1, "\(first)'ServicesResolved': <true>\(rest)")
    }

    @Test(
        "A GATT name other than the advertised one renames the device with ServicesResolved: Name, then Alias",
        arguments: Release.allCases)
    func gattNameRenames(release: Release) async throws {
        let peripheral = Self.sensor(StandardServices(deviceName: "Polar H10 6A11"))
        try await Fidelity.run(release, peripherals: [peripheral]) { _, client, _ in
            try await client.discoverSensor()
            #expect(try await client.get(Paths.sensor, Self.device1, "Name") == .string("HRM"))
            let mark = client.transcript.mark
            try await client.connectAndResolve()
            let uuids = "\(Self.standardUUIDs), '\(UUIDs.heartRate)', '\(UUIDs.custom)'"
            #expect(
                client.resolutions(since: mark).first?.description
                    == Self.resolved("'Name': <'Polar H10 6A11'>, 'Alias': <'Polar H10 6A11'>", uuids: uuids))
            #expect(try await client.get(Paths.sensor, Self.device1, "Alias") == .string("Polar H10 6A11"))
        }
    }

    @Test("The advertised name served over GATT changes nothing", arguments: Release.allCases)
    func sameNameChangesNothing(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Self.sensor(StandardServices())]) { _, client, _ in
            let uuids = "\(Self.standardUUIDs), '\(UUIDs.heartRate)', '\(UUIDs.custom)'"
            let signal = try await client.connectSensorResolution()
            #expect(signal == Self.resolved("", uuids: uuids))
        }
    }

    @Test("A client's alias stays: only Name changes", arguments: Release.allCases)
    func clientAliasStays(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Self.sensor(StandardServices(deviceName: "GATT"))]) {
            _, client, _ in
            try await client.discoverSensor()
            try await client.set(Paths.sensor, Self.device1, "Alias", .string("Mine"))
            try await client.connectAndResolve()
            #expect(try await client.get(Paths.sensor, Self.device1, "Name") == .string("GATT"))
            #expect(try await client.get(Paths.sensor, Self.device1, "Alias") == .string("Mine"))
        }
    }

    @Test(
        "Appearance is read for a device without one: Appearance, then Icon; an advertised one stays",
        arguments: Release.allCases)
    func appearanceOnlyWhenUnknown(release: Release) async throws {
        let computer = StandardServices(appearance: 0x0080)
        try await Fidelity.run(release, peripherals: [Self.sensor(computer)]) { _, client, _ in
            let signal = try #require(try await client.connectSensorResolution())
            #expect(
                signal.hasSuffix(
                    "'ServicesResolved': <true>, 'Appearance': <uint16 128>, 'Icon': <'computer'>}, @as [])"))
        }
        try await Fidelity.run(release, peripherals: [Self.sensor(computer, appearance: 0x0341)]) { _, client, _ in
            try await client.connectSensor()
            #expect(try await client.get(Paths.sensor, Self.device1, "Appearance") == .uint16(0x0341))
            let properties = try await client.getAll(Paths.sensor, Self.device1)
            #expect(properties["Icon"] == nil, "0x0341 (heart-rate belt) has no icon")
        }
    }

    @Test("5.66 reads the name again at every connection; from 5.77 once per device", arguments: Release.allCases)
    func rereadsPerRelease(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Self.sensor(StandardServices(deviceName: "first"))]) {
            simulator, client, _ in
            try await client.connectSensor()
            try await client.call(Paths.sensor, Self.device1, "Disconnect")
            try simulator.updatePeripheral(address: Peripherals.sensorAddress) {
                $0.standardServices?.deviceName = "second"
            }
            let mark = client.transcript.mark
            try await client.connectAndResolve()
            let renamed = "'Name': <'second'>, 'Alias': <'second'>"
            #expect(
                client.resolutions(since: mark).first?.description == Self.resolved(release == .bluez566 ? renamed : "")
            )
            let name = release == .bluez566 ? "second" : "first"
            #expect(try await client.get(Paths.sensor, Self.device1, "Name") == .string(name))
        }
    }

    @Test(
        "standardServices nil: no 1801 objects, only the declared UUIDs, the advertised name",
        arguments: Release.allCases)
    func optOut(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Self.sensor(nil)]) { _, client, _ in
            try await client.connectSensor()
            let tree = try await client.managedObjects()
            #expect(tree.interfaces(Paths.genericAttribute).isEmpty)
            #expect(tree.interfaces(Paths.genericAccess).isEmpty)
            #expect(tree.interfaces(Paths.heartRate).contains(BlueZInterface.gattService1.rawValue))
            let uuids = try await client.get(Paths.sensor, Self.device1, "UUIDs")
            #expect(uuids == .array(.string, [.string(UUIDs.heartRate), .string(UUIDs.custom)]))
            #expect(try await client.get(Paths.sensor, Self.device1, "Name") == .string("HRM"))
        }
    }

    @Test("A declared GAP service is read like the standard one; invalid UTF-8 becomes ASCII with spaces")
    func declaredGenericAccess() async throws {
        var peripheral = Self.sensor(nil)
        let name = VirtualCharacteristic(uuid: "2A00", flags: ["read"], value: [0x20, 0x41, 0xff, 0x42, 0x20])
        peripheral.services.insert(VirtualService(uuid: "1800", characteristics: [name]), at: 0)
        try await Fidelity.run(.bluez566, peripherals: [peripheral]) { _, client, _ in
            try await client.connectSensor()
            #expect(try await client.get(Paths.sensor, Self.device1, "Name") == .string("A B"))
            let tree = try await client.managedObjects()
            #expect(tree.interfaces(Paths.path(Paths.sensor.rawValue + "/service000a")).isEmpty, "claimed")
        }
    }

    @Test("addPeripheral refuses a declared 1801 beside the standard services")
    func declaredStandardServiceRefused() async throws {
        try await Fidelity.run(.bluez566) { simulator, _, _ in
            let peripheral = VirtualPeripheral(
                address: Peripherals.sensorAddress, services: [VirtualService(uuid: "1801", characteristics: [])])
            #expect(throws: DBusError.self) { try simulator.addPeripheral(peripheral) }
            var off = peripheral
            off.standardServices = nil
            try simulator.addPeripheral(off)
            #expect(simulator.peripherals.map(\.address) == [Peripherals.sensorAddress])
        }
    }
}
