import BLE
import BLESimulator
import DBus
import Foundation
import Testing

/// The SDK accepts BlueZ signals only from the current owner of `org.bluez`: another client on
/// the bus that emits look-alike signals changes nothing.
@Suite("Forged BlueZ signals", .timeLimit(.minutes(1)))
struct AntiSpoofingTests {
    static let fakeAddress = "11:22:33:44:55:66"
    static let markerAddress = "D1:00:00:00:00:99"

    /// Signals a rogue client sends, each imitating bluetoothd.
    static func forge(_ rogue: BusProbe, simulatorName: String) throws {
        let connection = rogue.connection
        // The adapter powering off.
        try connection.emitSignal(
            path: try ObjectPath(SimPath.adapter), interface: .properties, member: try MemberName("PropertiesChanged"),
            arguments: [
                .string("org.bluez.Adapter1"),
                .dictionary(
                    key: .string, value: .variant,
                    [DBusDictionaryEntry(.string("Powered"), .variant(.boolean(false)))]),
                .array(.string, []),
            ])
        // A device appearing, advertising.
        let device: [DBusDictionaryEntry] = [
            DBusDictionaryEntry(.string("Address"), .variant(.string(fakeAddress))),
            DBusDictionaryEntry(.string("AddressType"), .variant(.string("public"))),
            DBusDictionaryEntry(.string("Adapter"), .variant(.objectPath(try ObjectPath(SimPath.adapter)))),
            DBusDictionaryEntry(.string("Name"), .variant(.string("Fake"))),
            DBusDictionaryEntry(.string("Alias"), .variant(.string("Fake"))),
            DBusDictionaryEntry(.string("RSSI"), .variant(.int16(-30))),
            DBusDictionaryEntry(.string("Connected"), .variant(.boolean(true))),
            DBusDictionaryEntry(.string("ServicesResolved"), .variant(.boolean(true))),
            DBusDictionaryEntry(.string("Paired"), .variant(.boolean(true))),
            DBusDictionaryEntry(
                .string("UUIDs"), .variant(.array(.string, [.string("0000180d-0000-1000-8000-00805f9b34fb")]))),
        ]
        try connection.emitSignal(
            path: .root, interface: .objectManager, member: try MemberName("InterfacesAdded"),
            arguments: [
                .objectPath(try ObjectPath(SimPath.device(fakeAddress))),
                .dictionary(
                    key: .string, value: .dictionary(key: .string, value: .variant),
                    [
                        DBusDictionaryEntry(
                            .string("org.bluez.Device1"), .dictionary(key: .string, value: .variant, device))
                    ]),
            ])
        // bluetoothd leaving the bus, as the bus daemon would announce it.
        try connection.emitSignal(
            path: try ObjectPath("/org/freedesktop/DBus"), interface: .bus, member: try MemberName("NameOwnerChanged"),
            arguments: [.string("org.bluez"), .string(simulatorName), .string("")])
    }

    @Test("forged adapter, device and owner signals change neither state, scan nor known peripherals")
    func forgedSignalsChangeNothing() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            let rogue = try await BusProbe.open(fixture)
            let seen = PosixMutex<[String]>([])
            let scan = central.scan()
            let scanner = Task {
                for try await discovery in scan {
                    seen.withLock { $0.append(discovery.id.address) }
                    if discovery.id.address == Self.markerAddress { return }
                }
            }
            try await eventually("the scan reports the monitor") {
                seen.withLock { $0.contains(SimulatorFixture.heartRateAddress) }
            }
            let simulatorName = try #require(fixture.simulator.uniqueName).rawValue
            try Self.forge(rogue, simulatorName: simulatorName)
            // Everything the rogue sent is routed before the marker starts advertising, so the
            // scan reporting the marker proves the forged signals were processed (or dropped).
            try await rogue.barrier()
            try fixture.simulator.addPeripheral(TestPeripherals.advertiser(Self.markerAddress, name: "Marker"))
            try await scanner.value

            #expect(!seen.withLock { $0 }.contains(Self.fakeAddress))
            #expect(await central.state == .poweredOn)
            #expect(await !central.knownPeripherals().map(\.id.address).contains(Self.fakeAddress))
            #expect(await central.connectedPeripherals().isEmpty)
            rogue.close()
            await central.close()
        }
    }

    @Test("a forged owner change does not make the central think bluetoothd restarted")
    func forgedOwnerChange() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            let rogue = try await BusProbe.open(fixture)
            var states = central.states.makeAsyncIterator()
            #expect(await states.next() == .poweredOn)
            try Self.forge(rogue, simulatorName: try #require(fixture.simulator.uniqueName).rawValue)
            try await rogue.barrier()
            // A real change after the forged ones: the next state the central reports is it.
            fixture.simulator.setPowered(false)
            #expect(await states.next() == .poweredOff)
            fixture.simulator.setPowered(true)
            #expect(await states.next() == .poweredOn)
            rogue.close()
            await central.close()
        }
    }
}
