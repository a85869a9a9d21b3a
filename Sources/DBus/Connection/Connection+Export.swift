extension Connection {
    /// Exports interfaces on an object (creating it if new; an interface of the same name is
    /// replaced). The connection answers `Properties`, `Introspectable` and, where an object
    /// manager covers the path, emits `InterfacesAdded`.
    public func export(_ interfaces: [ExportedInterface], at path: ObjectPath) throws(DBusError) {
        for interface in interfaces {
            for (name, property) in interface.properties {
                // Signals built from the table are sent without a second check (see `emit`).
                guard !name.utf8.contains(0) else {
                    throw DBusError(.invalidValue, message: "property names cannot contain NUL characters")
                }
                // Where InterfacesAdded carries it: a{sa{sv}}, five containers deep.
                try property.value.validate(nestedIn: 5)
            }
        }
        let core = self.core
        core.objects.withLock { table in
            Self.emit(table.add(interfaces, at: path), on: core)
        }
    }

    /// Removes interfaces (all of them when `interfaces` is nil) from an object, emitting
    /// `InterfacesRemoved` where an object manager covers the path.
    public func unexport(_ path: ObjectPath, interfaces: [InterfaceName]? = nil) {
        let core = self.core
        core.objects.withLock { table in
            Self.emit(table.remove(at: path, interfaces: interfaces), on: core)
        }
    }

    /// Makes `path` an `org.freedesktop.DBus.ObjectManager` for every object below it.
    public func addObjectManager(at path: ObjectPath) {
        core.objects.withLock { $0.addManager(at: path) }
    }

    /// Stops answering `GetManagedObjects` at `path` (the objects below stay exported).
    public func removeObjectManager(at path: ObjectPath) {
        core.objects.withLock { $0.removeManager(at: path) }
    }

    /// Stores new property values and emits one `PropertiesChanged` for them.
    public func setProperties(
        _ changes: KeyValuePairs<String, DBusValue>, interface: InterfaceName, path: ObjectPath
    ) throws(DBusError) {
        _ = try Self.store(core, changes.map { ($0.key, $0.value) }, [], interface, path).get()
    }

    /// Stores one new property value and emits `PropertiesChanged`.
    public func setProperty(
        _ name: String, to value: DBusValue, interface: InterfaceName, path: ObjectPath
    ) throws(DBusError) {
        // The path of every GATT read and notification: no array is built on the way.
        let core = self.core
        try core.objects.withLock { table throws(DBusError) in
            let message: OpaquePointer
            switch try table.updateProperty(name, to: value, interface: interface, at: path) {
            case .emitsValue:
                message = try MessageEncoder.propertyChanged(path: path, interface: interface, name: name, value: value)
            case .invalidates:
                message = try MessageEncoder.propertyChanged(path: path, interface: interface, name: name, value: nil)
            case .constant, .none:
                return
            }
            // Queued under the lock, so signals leave in the order the table changed.
            core.enqueueSend(OwnedMessage(adopting: message))
        }
    }

    /// Sets some properties and makes others absent, announced in one `PropertiesChanged`
    /// (changed values, plus the removed names as invalidated), as bluetoothd coalesces them.
    public func updateProperties(
        set changes: KeyValuePairs<String, DBusValue> = [:], remove removals: [String] = [],
        interface: InterfaceName, path: ObjectPath
    ) throws(DBusError) {
        _ = try Self.store(core, changes.map { ($0.key, $0.value) }, removals, interface, path).get()
    }

    /// ``updateProperties(set:remove:interface:path:)`` for changes built at run time.
    public func updateProperties(
        _ changes: [(String, DBusValue)], removing removals: [String] = [], interface: InterfaceName,
        path: ObjectPath
    ) throws(DBusError) {
        _ = try Self.store(core, changes, removals, interface, path).get()
    }

    /// Stores new property values without `PropertiesChanged`: `Get` and `GetAll` answer them
    /// from now on, but no listener is told. Only for a server that stands in for a daemon that
    /// changes state silently (BLESimulator reproducing bluetoothd's quirks).
    public func storeSilently(_ changes: [(String, DBusValue)], interface: InterfaceName, path: ObjectPath)
        throws(DBusError)
    {
        _ = try Self.store(core, changes, [], interface, path, announce: false).get()
    }

    /// The stored value of an exported property (`nil` when it is absent or unknown).
    public func property(_ name: String, interface: InterfaceName, path: ObjectPath) -> DBusValue? {
        core.objects.withLock { table in
            guard let property = table.interface(interface, at: path)?.properties[name], property.isPresent else {
                return nil
            }
            return property.value
        }
    }

    /// Whether anything is exported at `path`.
    public func isExported(_ path: ObjectPath) -> Bool {
        core.objects.withLock { $0.objects[path] != nil }
    }

    @discardableResult
    static func store(
        _ core: ConnectionCore, _ changes: [(String, DBusValue)], _ removals: [String],
        _ interface: InterfaceName, _ path: ObjectPath?, announce: Bool = true
    ) -> Result<[DBusValue], DBusError> {
        guard let path else { return .failure(DBusError(.invalidValue, message: "no path")) }
        return core.objects.withLock { table -> Result<[DBusValue], DBusError> in
            do throws(DBusError) {
                let change = try table.updateProperties(set: changes, remove: removals, interface: interface, at: path)
                // Built here, under the lock, so signals leave in the order the table changed.
                if announce, let change {
                    core.enqueueSend(OwnedMessage(adopting: try MessageEncoder.propertiesChanged(change)))
                }
                return .success([])
            } catch {
                return .failure(error)
            }
        }
    }

    /// Queued while the table lock is held, so signals leave in the order the table changed.
    /// Their values were checked when stored and their names when exported, so the encoder
    /// does not walk them again.
    private static func emit(_ signals: [DBusMessage], on core: ConnectionCore) {
        for signal in signals { core.enqueue { loop in loop.send(signal, valuesValidated: true) } }
    }
}
