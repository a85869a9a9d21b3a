import BlueZ
import DBus
import Foundation
import Testing

/// The reducer fed the canonical traces of bluez-dbus-api.md §13, event by event.
@Suite struct ObjectTreeTranscriptTests {
    let adapter: ObjectPath
    let device: ObjectPath
    let service: ObjectPath
    let characteristic: ObjectPath
    let descriptor: ObjectPath
    let device1 = BlueZInterface.device1
    let adapter1 = BlueZInterface.adapter1

    init() throws {
        adapter = try Fixture.path(Fixture.adapterText)
        device = try Fixture.path(Fixture.deviceText)
        service = try BlueZPath.service(handle: 0x000a, device: device)
        characteristic = try BlueZPath.characteristic(handle: 0x000b, service: service)
        descriptor = try BlueZPath.descriptor(handle: 0x000d, characteristic: characteristic)
    }

    func changed(_ path: ObjectPath, _ interface: InterfaceName, _ values: [String: DBusValue]) -> ObjectTreeEvent {
        .propertiesChanged(path, interface, changed: values, invalidated: [])
    }

    /// A tree after the initial `GetManagedObjects`.
    func startedTree() throws -> BlueZObjectTree {
        var tree = BlueZObjectTree()
        let changes = tree.apply(.snapshot(try Fixture.snapshot()))
        #expect(changes.count == 7)
        #expect(changes.allSatisfy { if case .added = $0 { true } else { false } })
        return tree
    }

    /// A tree with a connected device whose GATT database is resolved.
    func connectedTree() throws -> BlueZObjectTree {
        var tree = try startedTree()
        _ = tree.apply(.interfacesAdded(device, Fixture.object(device1, Fixture.device(connected: true))))
        _ = tree.apply(
            .interfacesAdded(service, Fixture.object(BlueZInterface.gattService1, Fixture.service(device: device))))
        _ = tree.apply(
            .interfacesAdded(
                characteristic,
                Fixture.object(
                    BlueZInterface.gattCharacteristic1, Fixture.characteristic(service: service, handle: nil))))
        _ = tree.apply(
            .interfacesAdded(
                descriptor,
                Fixture.object(BlueZInterface.gattDescriptor1, Fixture.descriptor(characteristic: characteristic))))
        _ = tree.apply(changed(device, device1, ["ServicesResolved": .boolean(true)]))
        return tree
    }

    @Test func scan() throws {
        var tree = try startedTree()
        let other = try BlueZPath.device(address: "11:22:33:44:55:66", adapter: adapter)

        // StartDiscovery's reply, then Discovering=true.
        #expect(
            tree.apply(changed(adapter, adapter1, ["Discovering": .boolean(true)]))
                == [.changed(adapter, adapter1, changedKeys: ["Discovering"], invalidatedKeys: [])])
        #expect(try tree.adapter(at: adapter)?.discovering == true)

        // A new device arrives in one InterfacesAdded already holding RSSI and advertising data.
        #expect(
            tree.apply(.interfacesAdded(device, Fixture.object(device1, Fixture.device())))
                == [.added(device, device1), .added(device, .introspectable), .added(device, .properties)])
        #expect(try tree.device(at: device)?.rssi == -71)
        _ = tree.apply(.interfacesAdded(other, Fixture.object(device1, Fixture.device(address: "11:22:33:44:55:66"))))

        #expect(
            tree.apply(changed(device, device1, ["RSSI": .int16(-60)]))
                == [.changed(device, device1, changedKeys: ["RSSI"], invalidatedKeys: [])])
        let data = Fixture.manufacturerData([(0x004C, [0x02, 0x15]), (0x0006, [0x01])])
        #expect(
            tree.apply(changed(device, device1, ["ManufacturerData": data]))
                == [.changed(device, device1, changedKeys: ["ManufacturerData"], invalidatedKeys: [])])
        #expect(try tree.device(at: device)?.manufacturerData?[0x004C] == Data([0x02, 0x15]))

        // StopDiscovery: RSSI invalidated for every device seen, a non-connectable one removed,
        // Discovering=false.
        for path in [device, other] {
            #expect(
                tree.apply(.propertiesChanged(path, device1, changed: [:], invalidated: ["RSSI"]))
                    == [.changed(path, device1, changedKeys: [], invalidatedKeys: ["RSSI"])])
        }
        #expect(try tree.device(at: device)?.rssi == nil)
        #expect(
            tree.apply(.interfacesRemoved(other, [.introspectable, device1, .properties]))
                == [.removed(other, device1), .removed(other, .introspectable), .removed(other, .properties)])
        #expect(tree.interfaces(at: other) == nil)
        _ = tree.apply(changed(adapter, adapter1, ["Discovering": .boolean(false)]))
        #expect(try tree.adapter(at: adapter)?.discovering == false)

        // TemporaryTimeout later.
        _ = tree.apply(.interfacesRemoved(device, [.introspectable, device1, .properties]))
        #expect(tree.devicePaths(of: adapter).isEmpty)
    }

    @Test func connectAndResolveWithServicesResolvedBeforeTheLastObject() throws {
        var tree = try startedTree()
        _ = tree.apply(.interfacesAdded(device, Fixture.object(device1, Fixture.device())))

        _ = tree.apply(changed(device, device1, ["Connected": .boolean(true)]))
        #expect(try tree.device(at: device)?.connected == true)
        #expect(
            tree.apply(
                .interfacesAdded(service, Fixture.object(BlueZInterface.gattService1, Fixture.service(device: device))))
                == [
                    .added(service, BlueZInterface.gattService1), .added(service, .introspectable),
                    .added(service, .properties),
                ])

        // Q1: the device's PropertiesChanged overtakes the characteristic's InterfacesAdded.
        let resolved = tree.apply(
            changed(
                device, device1,
                [
                    "UUIDs": Fixture.strings(["00001a00-0000-1000-8000-00805f9b34fb"]),
                    "ServicesResolved": .boolean(true),
                ]))
        #expect(
            resolved == [.changed(device, device1, changedKeys: ["ServicesResolved", "UUIDs"], invalidatedKeys: [])])
        #expect(try tree.device(at: device)?.servicesResolved == true)
        #expect(tree.servicePaths(of: device) == [service])
        #expect(tree.characteristicPaths(of: service).isEmpty)

        _ = tree.apply(
            .interfacesAdded(
                characteristic,
                Fixture.object(
                    BlueZInterface.gattCharacteristic1, Fixture.characteristic(service: service, handle: nil))))
        _ = tree.apply(
            .interfacesAdded(
                descriptor,
                Fixture.object(BlueZInterface.gattDescriptor1, Fixture.descriptor(characteristic: characteristic))))
        #expect(tree.characteristicPaths(of: service) == [characteristic])
        #expect(tree.descriptorPaths(of: characteristic) == [descriptor])
        let typed = try #require(try tree.characteristic(at: characteristic))
        #expect(typed.resolvedHandle(path: characteristic) == 0x000b)
    }

    @Test func notificationsWithEqualValuesAreAllReported() throws {
        var tree = try connectedTree()
        let interface = BlueZInterface.gattCharacteristic1
        _ = tree.apply(changed(characteristic, interface, ["Notifying": .boolean(true)]))
        for _ in 0..<3 {
            #expect(
                tree.apply(changed(characteristic, interface, ["Value": .bytes(Data([0x42]))]))
                    == [.changed(characteristic, interface, changedKeys: ["Value"], invalidatedKeys: [])])
        }
        #expect(try tree.characteristic(at: characteristic)?.value == Data([0x42]))
    }

    @Test func disconnectKeepsTheGattObjects() throws {
        var tree = try connectedTree()
        let before = tree.descendants(of: device)
        #expect(
            tree.apply(changed(device, device1, ["ServicesResolved": .boolean(false)]))
                == [.changed(device, device1, changedKeys: ["ServicesResolved"], invalidatedKeys: [])])
        _ = tree.apply(changed(device, device1, ["Connected": .boolean(false)]))
        let properties = try #require(try tree.device(at: device))
        #expect(!properties.connected && !properties.servicesResolved)
        // Cache=always: the GATT objects survive the link.
        #expect(tree.descendants(of: device) == before)
        #expect(before == [service, characteristic, descriptor])
    }

    @Test func bluetoothdRestart() throws {
        var tree = try connectedTree()
        // NameOwnerChanged(":1.5" → ""): nothing else arrives for the vanished objects.
        let removed = tree.apply(.reset)
        #expect(removed.count == 19)
        #expect(removed.allSatisfy { if case .removed = $0 { true } else { false } })
        // Deepest objects first.
        #expect(removed.first?.path == descriptor)
        #expect(removed.last?.path == BlueZService.managerPath)
        #expect(tree.objects.isEmpty)
        #expect(tree.apply(.reset).isEmpty)

        // NameOwnerChanged("" → ":1.87"), then GetManagedObjects: adapters and persisted devices,
        // no GATT objects yet.
        var snapshot = try Fixture.snapshot()
        snapshot[device] = Fixture.object(device1, Fixture.device(rssi: nil))
        let added = tree.apply(.snapshot(snapshot))
        #expect(added.count == 10)
        #expect(added.allSatisfy { if case .added = $0 { true } else { false } })
        #expect(added.first?.path == BlueZService.managerPath)
        #expect(tree.descendants(of: device).isEmpty)
        #expect(try tree.device(at: device)?.rssi == nil)
    }

    @Test func snapshotReplacesAndReportsTheDifference() throws {
        var tree = try connectedTree()
        var snapshot = try Fixture.snapshot()
        var adapterProperties = Fixture.adapter()
        adapterProperties["Powered"] = .variant(.boolean(false))
        adapterProperties["Modalias"] = nil
        snapshot[adapter]?[adapter1] = adapterProperties
        snapshot[device] = Fixture.object(device1, Fixture.device(connected: true, resolved: true))
        let changes = tree.apply(.snapshot(snapshot))
        #expect(
            changes == [
                .removed(descriptor, BlueZInterface.gattDescriptor1), .removed(descriptor, .introspectable),
                .removed(descriptor, .properties),
                .removed(characteristic, BlueZInterface.gattCharacteristic1), .removed(characteristic, .introspectable),
                .removed(characteristic, .properties),
                .removed(service, BlueZInterface.gattService1), .removed(service, .introspectable),
                .removed(service, .properties),
                .changed(adapter, adapter1, changedKeys: ["Powered"], invalidatedKeys: ["Modalias"]),
            ])
        #expect(try tree.adapter(at: adapter)?.powered == false)
    }
}
