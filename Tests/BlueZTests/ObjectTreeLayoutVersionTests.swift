import BlueZ
import DBus
import Testing

/// ``BlueZObjectTree/gattLayoutVersion(of:)``: it moves with the GATT objects below a device,
/// and with nothing else.
@Suite struct ObjectTreeLayoutVersionTests {
    let device: ObjectPath
    let other: ObjectPath
    let service: ObjectPath
    let characteristic: ObjectPath

    init() throws {
        device = try Fixture.path(Fixture.deviceText)
        other = try Fixture.path("/org/bluez/hci0/dev_00_11_22_33_44_55")
        service = try BlueZPath.service(handle: 0x000a, device: device)
        characteristic = try BlueZPath.characteristic(handle: 0x000b, service: service)
    }

    func tree() throws -> BlueZObjectTree {
        var tree = BlueZObjectTree()
        _ = tree.apply(.snapshot(try Fixture.snapshot()))
        _ = tree.apply(.interfacesAdded(device, Fixture.object(BlueZInterface.device1, Fixture.device())))
        _ = tree.apply(.interfacesAdded(other, Fixture.object(BlueZInterface.device1, Fixture.device())))
        return tree
    }

    @Test func addingAndRemovingObjectsBelowTheDeviceMovesIt() throws {
        var tree = try tree()
        var seen: Set<UInt64> = [tree.gattLayoutVersion(of: device)]
        _ = tree.apply(
            .interfacesAdded(service, Fixture.object(BlueZInterface.gattService1, Fixture.service(device: device))))
        #expect(seen.insert(tree.gattLayoutVersion(of: device)).inserted)
        _ = tree.apply(
            .interfacesAdded(
                characteristic,
                Fixture.object(BlueZInterface.gattCharacteristic1, Fixture.characteristic(service: service))))
        #expect(seen.insert(tree.gattLayoutVersion(of: device)).inserted)
        _ = tree.apply(.interfacesRemoved(characteristic, [BlueZInterface.gattCharacteristic1]))
        #expect(seen.insert(tree.gattLayoutVersion(of: device)).inserted)
        _ = tree.apply(.interfacesRemoved(service, [BlueZInterface.gattService1]))
        #expect(seen.insert(tree.gattLayoutVersion(of: device)).inserted, "never a version seen before")
    }

    @Test func propertyChangesTheDeviceItselfAndOtherDevicesLeaveItAlone() throws {
        var tree = try tree()
        _ = tree.apply(
            .interfacesAdded(service, Fixture.object(BlueZInterface.gattService1, Fixture.service(device: device))))
        let version = tree.gattLayoutVersion(of: device)
        _ = tree.apply(
            .propertiesChanged(device, BlueZInterface.device1, changed: ["Connected": .boolean(true)], invalidated: []))
        _ = tree.apply(
            .propertiesChanged(
                service, BlueZInterface.gattService1, changed: ["Primary": .boolean(false)], invalidated: []))
        _ = tree.apply(
            .interfacesAdded(service, Fixture.object(BlueZInterface.gattService1, Fixture.service(device: device))))
        let otherService = try BlueZPath.service(handle: 0x000a, device: other)
        _ = tree.apply(
            .interfacesAdded(otherService, Fixture.object(BlueZInterface.gattService1, Fixture.service(device: other))))
        _ = tree.apply(
            .interfacesRemoved(try Fixture.path("/org/bluez/hci0/dev_00_11_22_33_44_66"), [BlueZInterface.device1]))
        #expect(tree.gattLayoutVersion(of: device) == version)
    }

    @Test func aSnapshotMovesEveryDevice() throws {
        var tree = try tree()
        let before = tree.gattLayoutVersion(of: other)
        _ = tree.apply(.snapshot(tree.objects))
        #expect(tree.gattLayoutVersion(of: other) != before)
    }

    @Test func versionsAreNotContent() throws {
        var moved = try tree()
        _ = moved.apply(
            .interfacesAdded(service, Fixture.object(BlueZInterface.gattService1, Fixture.service(device: device))))
        _ = moved.apply(
            .interfacesRemoved(service, [BlueZInterface.gattService1, Fixture.introspectable, Fixture.properties]))
        let still = try tree()
        #expect(moved == still)
        #expect(moved.hashValue == still.hashValue)
    }
}
