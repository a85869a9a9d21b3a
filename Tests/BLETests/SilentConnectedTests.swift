import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

@testable import BLE

/// bluetoothd 5.66 can bring a link up without ever signalling `Connected=true` (its ATT
/// socket came up before the kernel's connection event reached it; the property reads true).
/// Seen against the real daemon under btvirt (`make test-bluez`), reproduced here with
/// ``Simulator/silenceNextConnectedSignal(address:)``.
@Suite("A link that comes up without Connected=true", .timeLimit(.minutes(1)))
struct SilentConnectedTests {
    static let hrm = SimulatorFixture.heartRateAddress

    @Test("connect() still succeeds: the session re-reads the device, and the link is followed after")
    func connectWithoutSignal() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            let id = try await ConnectTests.discoverMonitor(central)
            try fixture.simulator.silenceNextConnectedSignal(address: Self.hrm)
            // Below 10 s there is no second attempt: the re-read alone has to rescue it.
            let peripheral = try await central.connect(id, timeout: .seconds(5))
            #expect(await peripheral.isConnected)
            #expect(await central.connectedPeripherals().map(\.id) == [id], "the mirror holds the link")
            #expect(fixture.simulator.statistics.connections == 1, "one link, no retry")
            let location = try await peripheral.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            #expect(try await location.read() == Data([0x01]))

            let events = peripheral.events
            try fixture.simulator.dropLink(address: Self.hrm)
            let dropped = try await first(events) { if case .disconnected = $0 { true } else { false } }
            #expect(dropped == .disconnected(.unknown))
            #expect(await !peripheral.isConnected)
            await central.close()
        }
    }

    @Test("a link another process opened without the signal shows as connected once its services resolve")
    func linkOfAnotherProcess() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            _ = try #require(try await first(central.scan()) { $0.id.address == Self.hrm })
            try fixture.simulator.silenceNextConnectedSignal(address: Self.hrm)
            let other = try await BusProbe.open(fixture)
            try await other.call(SimPath.device(Self.hrm), "org.bluez.Device1", "Connect")
            try await eventually("the central sees the link") {
                await central.knownPeripherals().first?.isConnected == true
            }
            #expect(await central.connectedPeripherals().count == 1)
            other.close()
            await central.close()
        }
    }
}

/// The order of a re-read's values against bluetoothd's signals, by serial.
@Suite("Re-read properties against signals")
struct PropertyRefreshesTests {
    static let key = PropertyRefreshes.Key(path: BlueZService.rootPath, interface: BlueZInterface.device1)

    static func changed(_ values: [String: DBusValue], serial: UInt32, in refreshes: inout PropertyRefreshes)
        -> [String: DBusValue]
    {
        let event = refreshes.filter(
            .propertiesChanged(key.path, key.interface, changed: values, invalidated: []), serial: serial)
        guard case .propertiesChanged(_, _, let kept, _) = event else { return [:] }
        return kept
    }

    @Test("a signal sent after the reply wins, whichever is applied first")
    func newerSignalWins() {
        var refreshes = PropertyRefreshes()
        let first = refreshes.begin(Self.key)
        let second = refreshes.begin(Self.key)
        #expect(first)
        #expect(!second, "one re-read at a time")
        // Applied before the reply, sent after it.
        _ = Self.changed(["Connected": .boolean(false)], serial: 20, in: &refreshes)
        let kept = refreshes.finish(
            Self.key, values: ["Connected": .boolean(true), "RSSI": .int16(-40)], serial: 10)
        #expect(kept == ["RSSI": .int16(-40)])
    }

    @Test("a signal sent before the reply loses, whichever is applied first")
    func olderSignalLoses() {
        var refreshes = PropertyRefreshes()
        _ = refreshes.begin(Self.key)
        _ = Self.changed(["RSSI": .int16(-70)], serial: 5, in: &refreshes)
        let kept = refreshes.finish(Self.key, values: ["Connected": .boolean(true), "RSSI": .int16(-40)], serial: 10)
        #expect(kept == ["Connected": .boolean(true), "RSSI": .int16(-40)])
        // Applied after the reply, sent before it: only what the reply did not set stays.
        let late = Self.changed(["Connected": .boolean(false), "Name": .string("x")], serial: 8, in: &refreshes)
        #expect(late == ["Name": .string("x")])
        // The first newer signal ends the filtering.
        let newer = Self.changed(["Connected": .boolean(false)], serial: 11, in: &refreshes)
        #expect(newer == ["Connected": .boolean(false)])
        let unfiltered = Self.changed(["Connected": .boolean(true)], serial: 9, in: &refreshes)
        #expect(unfiltered == ["Connected": .boolean(true)])
    }

    @Test("serials compare across the wrap at 2³²")
    func wrap() {
        #expect(PropertyRefreshes.isOlder(UInt32.max, than: 2))
        #expect(!PropertyRefreshes.isOlder(2, than: UInt32.max))
        #expect(PropertyRefreshes.isOlder(9, than: 10))
    }
}
