import BlueZ
import DBus
import Testing

@Suite struct ObjectTreeQueryTests {
    let hci0: ObjectPath
    let hci1: ObjectPath
    let device: ObjectPath
    let service: ObjectPath
    let characteristic: ObjectPath
    let tree: BlueZObjectTree

    init() throws {
        hci0 = try BlueZPath.adapter(index: 0)
        hci1 = try BlueZPath.adapter(index: 1)
        device = try Fixture.path(Fixture.deviceText)
        service = try BlueZPath.service(handle: 0x0010, device: device)
        characteristic = try BlueZPath.characteristic(handle: 0x0011, service: service)
        let otherDevice = try BlueZPath.device(address: "00:00:00:00:00:07", adapter: hci1)
        var snapshot = try Fixture.snapshot()
        snapshot[hci1] = Fixture.object(BlueZInterface.adapter1, Fixture.adapter())
        snapshot[device] = Fixture.object(BlueZInterface.device1, Fixture.device())
        snapshot[otherDevice] = Fixture.object(BlueZInterface.device1, Fixture.device(address: "00:00:00:00:00:07"))
        snapshot[service] = Fixture.object(BlueZInterface.gattService1, Fixture.service(device: device))
        snapshot[characteristic] = Fixture.object(
            BlueZInterface.gattCharacteristic1, Fixture.characteristic(service: service))
        tree = BlueZObjectTree(objects: snapshot)
    }

    @Test func pathsByInterface() throws {
        #expect(tree.adapterPaths() == [hci0, hci1])
        #expect(tree.paths(implementing: BlueZInterface.agentManager1) == [BlueZService.managerPath])
        #expect(tree.paths(implementing: BlueZInterface.gattManager1) == [hci0])
        #expect(tree.paths(implementing: .introspectable).count == 7)
        #expect(tree.paths(implementing: BlueZInterface.agent1).isEmpty)
    }

    @Test func childrenFollowThePathLayout() throws {
        #expect(tree.devicePaths(of: hci0) == [device])
        #expect(tree.devicePaths(of: hci1).count == 1)
        #expect(tree.servicePaths(of: device) == [service])
        #expect(tree.characteristicPaths(of: service) == [characteristic])
        #expect(tree.descriptorPaths(of: characteristic).isEmpty)
        #expect(tree.children(of: BlueZService.managerPath) == [hci0, hci1])
        #expect(tree.children(of: hci0, implementing: BlueZInterface.gattService1).isEmpty)
        #expect(tree.descendants(of: hci0) == [device, service, characteristic])
        #expect(tree.descendants(of: characteristic).isEmpty)
    }

    /// `children(of:)` compares bytes instead of building each path's parent; it must agree
    /// with `parent` on paths that share prefixes without sharing elements.
    @Test func childrenAgreeWithParentOnSharedPrefixes() throws {
        let raw = ["/a", "/ab", "/a/b", "/a/b/c", "/a/bc", "/ab/c", "/org", "/a/b/cd/e"]
        let paths = try raw.map { try ObjectPath($0) }
        let tree = BlueZObjectTree(
            objects: Dictionary(uniqueKeysWithValues: paths.map { ($0, [.introspectable: [:]]) }))
        for parent in try ["/", "/a", "/ab", "/a/b", "/a/b/c", "/x", "/a/b/cd"].map({ try ObjectPath($0) }) {
            #expect(tree.children(of: parent) == paths.filter { $0.parent == parent }.sorted(), "\(parent)")
        }
        #expect(try tree.children(of: ObjectPath("/a")) == [ObjectPath("/a/b"), ObjectPath("/a/bc")])
    }

    @Test func typedAccessors() throws {
        #expect(try tree.adapter(at: hci0)?.name == "host")
        #expect(try tree.adapter(at: device) == nil)
        #expect(try tree.device(at: device)?.name == "Flower care")
        #expect(try tree.service(at: service)?.device == device)
        #expect(try tree.characteristic(at: characteristic)?.flags == [.read, .write, .notify])
        #expect(try tree.descriptor(at: characteristic) == nil)
        #expect(try tree.advertisingManager(at: hci0)?.supportedInstances == 5)
        #expect(try tree.advertisingManager(at: hci1) == nil)
        #expect(try tree.battery(at: device) == nil)
        #expect(try tree.properties(GattManagerProperties.self, at: hci0) == GattManagerProperties())
        #expect(try tree.properties(AgentManagerProperties.self, at: BlueZService.managerPath) != nil)
        #expect(tree.contains(device, implementing: BlueZInterface.device1))
        #expect(!tree.contains(device, implementing: BlueZInterface.adapter1))
        #expect(tree.properties(at: device, interface: .properties) == [:])
    }

    @Test func devicePathByAddress() throws {
        let address = try BluetoothAddress("C4:7C:8D:6A:11:22")
        #expect(tree.devicePath(address: address, adapter: hci0) == device)
        #expect(tree.devicePath(address: address, adapter: hci1) == nil)

        // After pairing a device with a private address, Address changes but the path stays.
        var resolved = tree
        let identity = try BluetoothAddress("C0:FF:EE:00:00:01")
        _ = resolved.apply(
            .propertiesChanged(
                device, BlueZInterface.device1, changed: ["Address": .string(identity.description)], invalidated: []))
        #expect(resolved.devicePath(address: identity, adapter: hci0) == device)
        // The address it was found with still leads to it, through its path.
        #expect(resolved.devicePath(address: address, adapter: hci0) == device)
        #expect(resolved.devicePath(address: try BluetoothAddress("00:00:00:00:00:09"), adapter: hci0) == nil)

        // A device whose Address property matches wins over the conventional path.
        let moved = try BlueZPath.device(identity, adapter: hci0)
        _ = resolved.apply(
            .interfacesAdded(moved, [BlueZInterface.device1: Fixture.device(address: "00:00:00:00:00:08")]))
        #expect(resolved.devicePath(address: identity, adapter: hci0) == device)
    }
}
