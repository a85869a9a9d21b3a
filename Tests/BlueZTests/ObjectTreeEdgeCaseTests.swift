import BlueZ
import DBus
import Foundation
import Testing

/// Races and repeats the reducer must absorb (bluez-dbus-api.md §9 Q18, Q19).
@Suite struct ObjectTreeEdgeCaseTests {
    let adapter: ObjectPath
    let device: ObjectPath
    let device1 = BlueZInterface.device1

    init() throws {
        adapter = try Fixture.path(Fixture.adapterText)
        device = try Fixture.path(Fixture.deviceText)
    }

    func treeWithDevice() throws -> BlueZObjectTree {
        var snapshot = try Fixture.snapshot()
        snapshot[device] = Fixture.object(device1, Fixture.device())
        return BlueZObjectTree(objects: snapshot)
    }

    @Test func propertiesChangedForAnUnknownPathIsIgnored() throws {
        var tree = try treeWithDevice()
        let before = tree
        let stranger = try BlueZPath.device(address: "00:00:00:00:00:01", adapter: adapter)
        let event = ObjectTreeEvent.propertiesChanged(
            stranger, device1, changed: ["RSSI": .int16(-40)], invalidated: [])
        #expect(tree.apply(event).isEmpty)
        #expect(tree == before)
        #expect(tree.interfaces(at: stranger) == nil)
    }

    @Test func propertiesChangedForAnUnknownInterfaceIsIgnored() throws {
        var tree = try treeWithDevice()
        let before = tree
        let battery = ObjectTreeEvent.propertiesChanged(
            device, BlueZInterface.battery1, changed: ["Percentage": .byte(3)], invalidated: [])
        #expect(tree.apply(battery).isEmpty)
        #expect(tree == before)
    }

    @Test func invalidatedNamesNeverHeldAreIgnored() throws {
        var tree = try treeWithDevice()
        let before = tree
        let event = ObjectTreeEvent.propertiesChanged(
            device, device1, changed: [:], invalidated: ["TxPower", "ManufacturerData", "NoSuchThing"])
        #expect(tree.apply(event).isEmpty)
        #expect(tree == before)

        let mixed = ObjectTreeEvent.propertiesChanged(device, device1, changed: [:], invalidated: ["TxPower", "RSSI"])
        #expect(tree.apply(mixed) == [.changed(device, device1, changedKeys: [], invalidatedKeys: ["RSSI"])])
        #expect(try tree.device(at: device)?.rssi == nil)
    }

    @Test func emptyPropertiesChangedChangesNothing() throws {
        var tree = try treeWithDevice()
        #expect(tree.apply(.propertiesChanged(device, device1, changed: [:], invalidated: [])).isEmpty)
    }

    @Test func duplicateInterfacesAddedIsQuiet() throws {
        // The signal/GetManagedObjects race: the snapshot already holds what the signal adds.
        var tree = try treeWithDevice()
        let before = tree
        #expect(tree.apply(.interfacesAdded(device, Fixture.object(device1, Fixture.device()))).isEmpty)
        #expect(tree == before)
    }

    @Test func interfacesAddedForAPresentInterfaceReplacesIt() throws {
        var tree = try treeWithDevice()
        var properties = Fixture.device(rssi: -50)
        properties["ServiceData"] = nil
        properties["TxPower"] = .variant(.int16(0))
        let changes = tree.apply(.interfacesAdded(device, [device1: properties]))
        #expect(
            changes == [.changed(device, device1, changedKeys: ["RSSI", "TxPower"], invalidatedKeys: ["ServiceData"])])
        let typed = try #require(try tree.device(at: device))
        #expect(typed.rssi == -50)
        #expect(typed.txPower == 0)
        #expect(typed.serviceData == nil)
    }

    @Test func laterInterfacesAddedExtendsAnObject() throws {
        // LEAdvertisingManager1 can arrive in a later InterfacesAdded than Adapter1 (§1.3).
        var tree = BlueZObjectTree()
        _ = tree.apply(.interfacesAdded(adapter, Fixture.object(BlueZInterface.adapter1, Fixture.adapter())))
        let manager = Fixture.variants([
            "ActiveInstances": .byte(0), "SupportedInstances": .byte(5), "SupportedIncludes": Fixture.strings([]),
        ])
        #expect(
            tree.apply(.interfacesAdded(adapter, [BlueZInterface.leAdvertisingManager1: manager]))
                == [.added(adapter, BlueZInterface.leAdvertisingManager1)])
        #expect(try tree.advertisingManager(at: adapter)?.supportedInstances == 5)
        #expect(try tree.adapter(at: adapter) != nil)
    }

    @Test func removingUnknownInterfacesOrObjectsIsIgnored() throws {
        var tree = try treeWithDevice()
        let before = tree
        let stranger = try BlueZPath.device(address: "00:00:00:00:00:01", adapter: adapter)
        #expect(tree.apply(.interfacesRemoved(stranger, [device1])).isEmpty)
        #expect(tree.apply(.interfacesRemoved(device, [BlueZInterface.battery1])).isEmpty)
        #expect(tree.apply(.interfacesRemoved(device, [])).isEmpty)
        #expect(tree == before)
    }

    @Test func removingSomeInterfacesKeepsTheObject() throws {
        var tree = try treeWithDevice()
        _ = tree.apply(.interfacesAdded(device, [BlueZInterface.battery1: Fixture.variants(["Percentage": .byte(50)])]))
        #expect(try tree.battery(at: device)?.percentage == 50)
        #expect(
            tree.apply(.interfacesRemoved(device, [BlueZInterface.battery1, BlueZInterface.battery1]))
                == [.removed(device, BlueZInterface.battery1)])
        #expect(try tree.device(at: device) != nil)
        #expect(try tree.battery(at: device) == nil)
    }

    @Test func deviceRemovalWithItsGattSubtree() throws {
        var tree = try treeWithDevice()
        let service = try BlueZPath.service(handle: 0x0010, device: device)
        let characteristic = try BlueZPath.characteristic(handle: 0x0011, service: service)
        let descriptor = try BlueZPath.descriptor(handle: 0x0013, characteristic: characteristic)
        _ = tree.apply(
            .interfacesAdded(service, Fixture.object(BlueZInterface.gattService1, Fixture.service(device: device))))
        _ = tree.apply(
            .interfacesAdded(
                characteristic,
                Fixture.object(BlueZInterface.gattCharacteristic1, Fixture.characteristic(service: service))))
        _ = tree.apply(
            .interfacesAdded(
                descriptor,
                Fixture.object(BlueZInterface.gattDescriptor1, Fixture.descriptor(characteristic: characteristic))))

        // RemoveDevice: every object of the subtree emits its own InterfacesRemoved. The reducer
        // does not cascade, so a removed parent leaves children until their own signal.
        _ = tree.apply(.interfacesRemoved(device, [.introspectable, device1, .properties]))
        #expect(tree.interfaces(at: device) == nil)
        #expect(tree.descendants(of: device) == [service, characteristic, descriptor])
        #expect(tree.devicePaths(of: adapter).isEmpty)

        let interfaces: [(ObjectPath, InterfaceName)] = [
            (descriptor, BlueZInterface.gattDescriptor1), (characteristic, BlueZInterface.gattCharacteristic1),
            (service, BlueZInterface.gattService1),
        ]
        for (path, interface) in interfaces {
            #expect(
                tree.apply(.interfacesRemoved(path, [.introspectable, interface, .properties]))
                    == [.removed(path, interface), .removed(path, .introspectable), .removed(path, .properties)])
        }
        #expect(tree.descendants(of: device).isEmpty)
        #expect(tree.descendants(of: adapter).isEmpty)
        // A late PropertiesChanged for the vanished characteristic is ignored.
        let late = ObjectTreeEvent.propertiesChanged(
            characteristic, BlueZInterface.gattCharacteristic1, changed: ["Value": .bytes(Data([1]))], invalidated: [])
        #expect(tree.apply(late).isEmpty)
    }

    @Test func malformedPropertiesStayInTheTreeAndFailOnlyTypedAccess() throws {
        var tree = try treeWithDevice()
        // A held property changing type is ignored (ObjectTreeTypeChangeTests); one the tree
        // has no value for yet is stored as sent, and only typed access fails.
        #expect(
            tree.apply(.propertiesChanged(device, device1, changed: ["TxPower": .string("loud")], invalidated: []))
                == [.changed(device, device1, changedKeys: ["TxPower"], invalidatedKeys: [])])
        let error = #expect(throws: DBusError.self) { try tree.device(at: device) }
        #expect(error?.message == "org.bluez.Device1.TxPower: expected n, got s")
        // Introspectable/Properties entries never fail anything.
        #expect(tree.properties(at: device, interface: .introspectable) == [:])
    }

    @Test func valuesAreStoredUnwrapped() throws {
        var tree = BlueZObjectTree()
        _ = tree.apply(.interfacesAdded(device, [device1: ["RSSI": .variant(.int16(-1))]]))
        _ = tree.apply(.propertiesChanged(device, device1, changed: ["TxPower": .variant(.int16(3))], invalidated: []))
        #expect(tree.properties(at: device, interface: device1) == ["RSSI": .int16(-1), "TxPower": .int16(3)])
        // A repeat with the same value, wrapped or not, changes nothing.
        #expect(tree.apply(.interfacesAdded(device, [device1: ["RSSI": .int16(-1), "TxPower": .int16(3)]])).isEmpty)
    }

    @Test func objectsWithoutInterfacesAreNotKept() throws {
        var tree = BlueZObjectTree(objects: [device: [:]])
        #expect(tree.objects.isEmpty)
        #expect(tree.apply(.snapshot([device: [:]])).isEmpty)
        #expect(tree.apply(.interfacesAdded(device, [:])).isEmpty)
        #expect(tree.objects.isEmpty)
    }
}
