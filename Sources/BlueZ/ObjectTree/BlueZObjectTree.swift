import DBus

/// A mirror of bluetoothd's object tree, kept current by applying ``ObjectTreeEvent``s: a pure
/// reducer with no I/O.
///
/// Feed it the `GetManagedObjects` answer as ``ObjectTreeEvent/snapshot(_:)``, then every
/// `InterfacesAdded`, `InterfacesRemoved` and `PropertiesChanged` from bluetoothd, and
/// ``ObjectTreeEvent/reset`` when bluetoothd leaves the bus. Each call to ``apply(_:)`` returns
/// what changed. Events that do not fit the tree are ignored, never fatal, because bluetoothd's
/// signals race the snapshot (bluez-dbus-api.md §9 Q18, Q19): `PropertiesChanged` for an unknown
/// object or interface, invalidated names never held, removal of unknown interfaces.
///
/// Every interface is kept, including `org.freedesktop.DBus.Introspectable` and
/// `org.freedesktop.DBus.Properties`, which bluetoothd lists with empty dictionaries (§1.3).
/// Removing an object's last interface removes the object; its children are not touched, since
/// bluetoothd sends `InterfacesRemoved` for each of them (§1.2).
public struct BlueZObjectTree: Sendable, Hashable {
    /// Every known object: path → interface → property name → value (not wrapped in a variant).
    public private(set) var objects: [ObjectPath: [InterfaceName: [String: DBusValue]]]
    /// When each device's GATT objects last changed (an interface added or removed below the
    /// device), by device path, on ``layoutClock``: a client that decoded a device's services
    /// keeps its result while the version stays, instead of decoding them at every connection
    /// (bluetoothd keeps the objects across links, Q3). Entries stay when a device goes, so a
    /// version never repeats; only devices that had GATT objects get one.
    private var layoutVersions: [ObjectPath: UInt64] = [:]
    /// Counts structural changes below devices; a snapshot moves every device's version.
    private var layoutClock: UInt64 = 0
    private var replacedAt: UInt64 = 0
    /// The known objects by parent path, so that a device's services (a service's
    /// characteristics, …) are found without walking every object bluetoothd holds: with a
    /// hundred devices known, a walk per look-up made a connection cost grow with them.
    private var childIndex: [ObjectPath: Set<ObjectPath>] = [:]

    /// An empty tree, or one holding `objects`.
    public init(objects: [ObjectPath: [InterfaceName: [String: DBusValue]]] = [:]) {
        self.objects = [:]
        _ = replace(with: objects)
    }

    /// Applies `event` and returns its changes.
    ///
    /// - ``ObjectTreeEvent/snapshot(_:)`` replaces the tree: `.removed` for what vanished,
    ///   `.added` for what is new, `.changed` for interfaces whose properties differ.
    /// - ``ObjectTreeEvent/interfacesAdded(_:_:)`` adds interfaces; one already present has its
    ///   properties replaced and reports `.changed` for the differences (nothing when identical,
    ///   as when a signal repeats what the snapshot already held).
    /// - ``ObjectTreeEvent/interfacesRemoved(_:_:)`` removes interfaces; unknown ones are ignored.
    /// - ``ObjectTreeEvent/propertiesChanged(_:_:changed:invalidated:)`` updates an interface the
    ///   tree holds and is ignored otherwise; invalidated names it never held are ignored, and so
    ///   is a value whose D-Bus type differs from the one held (the last good value stays).
    /// - ``ObjectTreeEvent/reset`` removes everything.
    ///
    /// Changes come in a stable order: removals deepest path first, then additions and property
    /// changes shallowest path first (parents before children); interfaces by name within a path.
    public mutating func apply(_ event: ObjectTreeEvent) -> [ObjectTreeChange] {
        switch event {
        case .snapshot(let snapshot): replace(with: snapshot)
        case .interfacesAdded(let path, let interfaces): add(interfaces, at: path)
        case .interfacesRemoved(let path, let names): remove(names, at: path)
        case .propertiesChanged(let path, let interface, let changed, let invalidated):
            change(path, interface, changed: changed, invalidated: invalidated)
        case .reset: replace(with: [:])
        }
    }

    /// The version of the GATT objects below `device`: it changes whenever one of them is added
    /// or removed (or the tree is replaced), and only then.
    public func gattLayoutVersion(of device: ObjectPath) -> UInt64 {
        max(layoutVersions[device] ?? 0, replacedAt)
    }

    /// Equal when the objects are: the layout versions are history, not content.
    public static func == (lhs: BlueZObjectTree, rhs: BlueZObjectTree) -> Bool { lhs.objects == rhs.objects }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(objects) }

    /// The paths of the objects directly below `parent`.
    func childPaths(of parent: ObjectPath) -> Set<ObjectPath> { childIndex[parent] ?? [] }

    // MARK: Reducers

    private mutating func replace(
        with snapshot: [ObjectPath: [InterfaceName: [String: DBusValue]]]
    ) -> [ObjectTreeChange] {
        var incoming: [ObjectPath: [InterfaceName: [String: DBusValue]]] = [:]
        for (path, interfaces) in snapshot where !interfaces.isEmpty {
            incoming[path] = interfaces.mapValues(Self.normalized)
        }
        var changes: [ObjectTreeChange] = []
        for path in objects.keys.sorted(by: >) {
            guard let old = objects[path] else { continue }
            for interface in old.keys.sorted() where incoming[path]?[interface] == nil {
                changes.append(.removed(path, interface))
            }
        }
        for path in incoming.keys.sorted() {
            guard let new = incoming[path] else { continue }
            for interface in new.keys.sorted() {
                changes += Self.difference(path, interface, old: objects[path]?[interface], new: new[interface])
            }
        }
        objects = incoming
        layoutClock += 1
        replacedAt = layoutClock
        childIndex = [:]
        for path in objects.keys { if let parent = path.parent { childIndex[parent, default: []].insert(path) } }
        return changes
    }

    private mutating func add(
        _ interfaces: [InterfaceName: [String: DBusValue]], at path: ObjectPath
    ) -> [ObjectTreeChange] {
        if !interfaces.isEmpty, !interfaces.values.contains(where: Self.holdsVariant),
            Self.store(interfaces, ifEmpty: &objects[path, default: [:]])
        {
            // A new object as decoded (every advertiser's first signal): stored as it came,
            // found and inserted in one probe of the table, with no copy of its dictionaries.
            if let parent = path.parent { childIndex[parent, default: []].insert(path) }
            layoutChanged(at: path)
            // The names are sorted, not the changes: this runs for every advertiser a scan
            // finds, and reading a change's name in a comparison copied the change (path and
            // name retained and released) several times per advertiser.
            return Self.orderedNames(of: interfaces).map { .added(path, $0) }
        }
        var changes: [ObjectTreeChange] = []
        for interface in Self.orderedNames(of: interfaces) {
            guard let properties = interfaces[interface].map(Self.normalized) else { continue }
            let old = objects[path]?[interface]
            if old == nil { layoutChanged(at: path) }
            changes += Self.difference(path, interface, old: old, new: properties)
            objects[path, default: [:]][interface] = properties
        }
        if objects[path] != nil, let parent = path.parent { childIndex[parent, default: []].insert(path) }
        return changes
    }

    private mutating func remove(_ names: [InterfaceName], at path: ObjectPath) -> [ObjectTreeChange] {
        guard var interfaces = objects[path] else { return [] }
        var changes: [ObjectTreeChange] = []
        for interface in Set(names).sorted() where interfaces.removeValue(forKey: interface) != nil {
            changes.append(.removed(path, interface))
        }
        if !changes.isEmpty { layoutChanged(at: path) }
        objects[path] = interfaces.isEmpty ? nil : interfaces
        if interfaces.isEmpty, let parent = path.parent {
            childIndex[parent]?.remove(path)
            if childIndex[parent]?.isEmpty == true { childIndex[parent] = nil }
        }
        return changes
    }

    private mutating func change(
        _ path: ObjectPath, _ interface: InterfaceName, changed: [String: DBusValue], invalidated: [String]
    ) -> [ObjectTreeChange] {
        // Found once and mutated in place through the dictionaries' indices: a look-up per key
        // and level (a path's hash each time) was most of what applying a change cost, and a
        // copy of the properties would be copied again on write.
        guard let object = objects.index(forKey: path), let slot = objects.values[object].index(forKey: interface)
        else { return [] }
        var changedKeys: [String] = []
        var invalidatedKeys: [String] = []
        objects.values[object].values[slot].applyChange(changed, invalidated, &changedKeys, &invalidatedKeys)
        guard !changedKeys.isEmpty || !invalidatedKeys.isEmpty else { return [] }
        if changedKeys.count > 1 { changedKeys.sort() }
        return [.changed(path, interface, changedKeys: changedKeys, invalidatedKeys: invalidatedKeys)]
    }

    // MARK: Helpers

    /// An interface came or went at `path`: when that is below a device, the device's GATT
    /// layout changed. Found by counting separators, cheap for every advertiser a scan adds.
    private mutating func layoutChanged(at path: ObjectPath) {
        guard let devicePath = BlueZPath.device(below: path) else { return }
        layoutClock += 1
        layoutVersions[devicePath] = layoutClock
    }

    /// The change from `old` to `new` properties of one interface: added, changed or nothing.
    private static func difference(
        _ path: ObjectPath, _ interface: InterfaceName, old: [String: DBusValue]?, new: [String: DBusValue]?
    ) -> [ObjectTreeChange] {
        guard let new else { return [] }
        guard let old else { return [.added(path, interface)] }
        let changed = new.filter { old[$0.key] != $0.value }.keys.sorted()
        let invalidated = old.keys.filter { new[$0] == nil }.sorted()
        if changed.isEmpty && invalidated.isEmpty { return [] }
        return [.changed(path, interface, changedKeys: changed, invalidatedKeys: invalidated)]
    }

    /// The names of `interfaces` in order, sorted by insertion: an object has a few interfaces
    /// (three for every advertiser), and the standard library's sort is code for collections
    /// of any size that an advertiser's signal ran with cold caches.
    private static func orderedNames(of interfaces: [InterfaceName: [String: DBusValue]]) -> [InterfaceName] {
        var names = Array(interfaces.keys)
        names.withUnsafeMutableBufferPointer { names in
            for index in names.indices.dropFirst() {
                var slot = index
                while slot > 0 && names[slot] < names[slot - 1] {
                    names.swapAt(slot, slot - 1)
                    slot -= 1
                }
            }
        }
        return names
    }

    /// Stores `interfaces` in `slot` when it is empty (an object the tree did not hold: it
    /// keeps no object without interfaces); whether it did.
    private static func store(
        _ interfaces: [InterfaceName: [String: DBusValue]], ifEmpty slot: inout [InterfaceName: [String: DBusValue]]
    ) -> Bool {
        guard slot.isEmpty else { return false }
        slot = interfaces
        return true
    }

    /// Whether a property value is still wrapped in a variant (``normalized(_:)`` unwraps it).
    private static func holdsVariant(_ properties: [String: DBusValue]) -> Bool {
        properties.values.contains { if case .variant = $0 { true } else { false } }
    }

    /// Property values as stored: one variant level unwrapped.
    private static func normalized(_ properties: [String: DBusValue]) -> [String: DBusValue] {
        properties.mapValues(PropertyDecoding.unwrapped)
    }
}

extension Dictionary where Key == String, Value == DBusValue {
    /// Applies one `PropertiesChanged` to these properties, noting the keys it changed and those
    /// it removed. A property never changes its D-Bus type: a value of another type is bad input
    /// (a broken or impersonated daemon) and is ignored, keeping the last good one.
    fileprivate mutating func applyChange(
        _ changed: [String: DBusValue], _ invalidated: [String], _ changedKeys: inout [String],
        _ invalidatedKeys: inout [String]
    ) {
        for (key, value) in changed {
            let value = PropertyDecoding.unwrapped(value)
            if let index = index(forKey: key) {
                guard values[index].hasSameType(as: value) else { continue }
                values[index] = value
            } else {
                self[key] = value
            }
            changedKeys.append(key)
        }
        for key in invalidated where removeValue(forKey: key) != nil { invalidatedKeys.append(key) }
    }
}
