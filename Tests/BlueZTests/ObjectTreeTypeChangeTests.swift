import BlueZ
import DBus
import Foundation
import Testing

/// A `PropertiesChanged` that gives a property another D-Bus type than it has is bad input
/// (a broken or impersonated daemon): that value is ignored, the rest of the signal applies.
@Suite struct ObjectTreeTypeChangeTests {
    @Test func aValueOfAnotherTypeIsIgnoredAndTheRestApplies() throws {
        let adapter = try Fixture.path(Fixture.adapterText)
        let device = try Fixture.path(Fixture.deviceText)
        var snapshot = try Fixture.snapshot()
        snapshot[device] = Fixture.object(BlueZInterface.device1, Fixture.device())
        var tree = BlueZObjectTree(objects: snapshot)
        let before = try #require(try tree.device(at: device))

        let changes = tree.apply(
            .propertiesChanged(
                device, BlueZInterface.device1,
                changed: ["RSSI": .string("loud"), "Connected": .uint32(1), "Alias": .variant(.string("Renamed"))],
                invalidated: []))

        #expect(changes == [.changed(device, BlueZInterface.device1, changedKeys: ["Alias"], invalidatedKeys: [])])
        let after = try #require(try tree.device(at: device))
        #expect(after.rssi == before.rssi)
        #expect(after.connected == before.connected)
        #expect(after.alias == "Renamed")
        #expect(
            tree.apply(
                .propertiesChanged(adapter, BlueZInterface.adapter1, changed: ["Powered": .byte(0)], invalidated: [])
            ).isEmpty)
    }
}
