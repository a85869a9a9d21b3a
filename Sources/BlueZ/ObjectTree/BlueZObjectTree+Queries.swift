import DBus

extension BlueZObjectTree {
    // MARK: Raw queries

    /// The interfaces of the object at `path` and their properties, or `nil` when unknown.
    public func interfaces(at path: ObjectPath) -> [InterfaceName: [String: DBusValue]]? {
        objects[path]
    }

    /// The properties of `interface` on the object at `path`, or `nil` when either is unknown.
    public func properties(at path: ObjectPath, interface: InterfaceName) -> [String: DBusValue]? {
        objects[path]?[interface]
    }

    /// Whether the object at `path` implements `interface`.
    public func contains(_ path: ObjectPath, implementing interface: InterfaceName) -> Bool {
        objects[path]?[interface] != nil
    }

    /// The paths of every object implementing `interface`, sorted.
    public func paths(implementing interface: InterfaceName) -> [ObjectPath] {
        objects.compactMap { $0.value[interface] != nil ? $0.key : nil }.sorted()
    }

    /// The paths of the direct children of `parent` (objects one element below it), optionally
    /// only those implementing `interface`, sorted.
    public func children(of parent: ObjectPath, implementing interface: InterfaceName? = nil) -> [ObjectPath] {
        let paths = childPaths(of: parent)
        guard let interface else { return paths.sorted() }
        return paths.filter { objects[$0]?[interface] != nil }.sorted()
    }

    /// `path.parent == parent` without building the parent's string: this runs for every object
    /// of the tree, several times per discovered service and characteristic.
    static func isChild(_ path: ObjectPath, of parent: ObjectPath) -> Bool {
        let slash = UInt8(ascii: "/")
        let fast = path.rawValue.utf8.withContiguousStorageIfAvailable { bytes in
            parent.rawValue.utf8.withContiguousStorageIfAvailable { prefix -> Bool in
                // The root's children start right after its "/"; anyone else's after "parent/".
                let start = parent.rawValue == "/" ? 0 : prefix.count
                guard bytes.count > start + 1, bytes[start] == slash else { return false }
                for index in 0..<start where bytes[index] != prefix[index] { return false }
                return !bytes[(start + 1)...].contains(slash)
            }
        }
        return (fast ?? nil) ?? (path.parent == parent)
    }

    /// The paths of every object below `ancestor` (its whole subtree, not itself), sorted.
    public func descendants(of ancestor: ObjectPath) -> [ObjectPath] {
        objects.keys.filter { $0.isDescendant(of: ancestor) }.sorted()
    }

    // MARK: BlueZ layout

    /// The adapters (`Adapter1` objects), sorted by path (`hci0` before `hci1`).
    public func adapterPaths() -> [ObjectPath] {
        paths(implementing: BlueZInterface.adapter1)
    }

    /// The devices (`Device1` objects) of the adapter at `adapter`.
    public func devicePaths(of adapter: ObjectPath) -> [ObjectPath] {
        children(of: adapter, implementing: BlueZInterface.device1)
    }

    /// The remote services (`GattService1` objects) of the device at `device`.
    public func servicePaths(of device: ObjectPath) -> [ObjectPath] {
        children(of: device, implementing: BlueZInterface.gattService1)
    }

    /// Whether the device at `device` has a remote service in the tree, found without sorting.
    public func holdsServices(of device: ObjectPath) -> Bool {
        childPaths(of: device).contains { objects[$0]?[BlueZInterface.gattService1] != nil }
    }

    /// The characteristics (`GattCharacteristic1` objects) of the service at `service`.
    public func characteristicPaths(of service: ObjectPath) -> [ObjectPath] {
        children(of: service, implementing: BlueZInterface.gattCharacteristic1)
    }

    /// The characteristics of every service of `device`, in no particular order: for a walk
    /// that visits each one, without the sorting of ``characteristicPaths(of:)``.
    public func unorderedCharacteristicPaths(ofDevice device: ObjectPath) -> [ObjectPath] {
        var paths: [ObjectPath] = []
        for service in childPaths(of: device) where objects[service]?[BlueZInterface.gattService1] != nil {
            for path in childPaths(of: service) where objects[path]?[BlueZInterface.gattCharacteristic1] != nil {
                paths.append(path)
            }
        }
        return paths
    }

    /// The descriptors (`GattDescriptor1` objects) of the characteristic at `characteristic`.
    public func descriptorPaths(of characteristic: ObjectPath) -> [ObjectPath] {
        children(of: characteristic, implementing: BlueZInterface.gattDescriptor1)
    }

    /// The path of the device with `address` on `adapter`, or `nil` when there is none.
    ///
    /// A device whose `Address` property is `address` wins, the conventional path
    /// (`dev_AA_BB_…`) first; failing that, the object at the conventional path, whose `Address`
    /// may have changed since it was created (pairing resolves a private address to the
    /// identity address while the path stays, bluez-dbus-api.md §9 Q22).
    public func devicePath(address: BluetoothAddress, adapter: ObjectPath) -> ObjectPath? {
        let text = DBusValue.string(address.description)
        func hasAddress(_ path: ObjectPath) -> Bool {
            properties(at: path, interface: BlueZInterface.device1)?[DeviceProperties.Key.address] == text
        }
        let conventional = try? BlueZPath.device(address, adapter: adapter)
        if let conventional, hasAddress(conventional) { return conventional }
        if let match = devicePaths(of: adapter).first(where: hasAddress) { return match }
        if let conventional, contains(conventional, implementing: BlueZInterface.device1) { return conventional }
        return nil
    }

    // MARK: Typed

    /// The properties of the object at `path` decoded as `type`, or `nil` when the object does
    /// not implement `type`'s interface.
    ///
    /// - Throws: ``DBus/DBusError`` with code `.typeMismatch` when the properties do not decode.
    public func properties<P: BlueZInterfaceProperties>(_ type: P.Type, at path: ObjectPath) throws(DBusError) -> P? {
        guard let properties = objects[path]?[P.interface] else { return nil }
        return try P(properties: properties)
    }

    /// The `Adapter1` properties at `path`, or `nil` when it is not an adapter.
    public func adapter(at path: ObjectPath) throws(DBusError) -> AdapterProperties? {
        try properties(AdapterProperties.self, at: path)
    }

    /// The `Device1` properties at `path`, or `nil` when it is not a device.
    public func device(at path: ObjectPath) throws(DBusError) -> DeviceProperties? {
        try properties(DeviceProperties.self, at: path)
    }

    /// The advertised properties of the device at `path` (only those a scan reports), or `nil`
    /// when it is not a device.
    public func advertisement(at path: ObjectPath) throws(DBusError) -> DeviceAdvertisement? {
        guard let properties = objects[path]?[BlueZInterface.device1] else { return nil }
        return try DeviceAdvertisement(properties: properties)
    }

    /// The `GattService1` properties at `path`, or `nil` when it is not a service.
    public func service(at path: ObjectPath) throws(DBusError) -> GattServiceProperties? {
        try properties(GattServiceProperties.self, at: path)
    }

    /// The `GattCharacteristic1` properties at `path`, or `nil` when it is not a characteristic.
    public func characteristic(at path: ObjectPath) throws(DBusError) -> GattCharacteristicProperties? {
        try properties(GattCharacteristicProperties.self, at: path)
    }

    /// The `GattDescriptor1` properties at `path`, or `nil` when it is not a descriptor.
    public func descriptor(at path: ObjectPath) throws(DBusError) -> GattDescriptorProperties? {
        try properties(GattDescriptorProperties.self, at: path)
    }

    /// The `LEAdvertisingManager1` properties at `path` (an adapter), or `nil` when absent.
    public func advertisingManager(at path: ObjectPath) throws(DBusError) -> LEAdvertisingManagerProperties? {
        try properties(LEAdvertisingManagerProperties.self, at: path)
    }

    /// The `Battery1` properties at `path` (a device), or `nil` when absent.
    public func battery(at path: ObjectPath) throws(DBusError) -> BatteryProperties? {
        try properties(BatteryProperties.self, at: path)
    }
}
