/// The objects a connection exports, with their interfaces and stored property values.
///
/// Pure bookkeeping: every mutation returns the signals it implies (InterfacesAdded/Removed,
/// PropertiesChanged) and the caller sends them, so the table itself does no I/O.
struct ObjectTable {
    struct Object {
        var interfaces: [InterfaceName: ExportedInterface] = [:]
        /// Insertion order, so replies list interfaces the way they were exported.
        var order: [InterfaceName] = []

        /// The interface names as listed in object-manager dicts under `conventions`.
        func listedNames(_ conventions: ExportConventions) -> [InterfaceName] {
            guard conventions == .gdbus else { return order }
            // gdbus registers Introspectable first and Properties right after the first
            // interface that declares properties.
            var names: [InterfaceName] = [.introspectable]
            var propertiesListed = false
            for name in order {
                names.append(name)
                if !propertiesListed, let interface = interfaces[name], !interface.properties.isEmpty {
                    names.append(.properties)
                    propertiesListed = true
                }
            }
            return names
        }
    }

    let conventions: ExportConventions
    private(set) var objects: [ObjectPath: Object] = [:]
    private(set) var managers: Set<ObjectPath> = []
    /// Recent resolutions of incoming calls, emptied by every change to objects, interfaces or
    /// methods (not property values), so none outlives what it resolved to.
    private var resolvedMethods = ResolvedMethods()

    init(conventions: ExportConventions = .standard) {
        self.conventions = conventions
    }

    /// ``IncomingCall/resolve(_:signature:in:)`` through the recent resolutions.
    mutating func resolve(_ call: DBusMessage, signature: String) -> IncomingCall {
        // Moved out while it resolves against the table it belongs to.
        var cache = resolvedMethods
        resolvedMethods = ResolvedMethods()
        defer { resolvedMethods = cache }
        return cache.resolve(call, signature: signature, in: self)
    }

    /// See ``ResolvedMethods/lookup(path:interface:member:signature:)``.
    func resolvedCall(
        path: UnsafePointer<CChar>, interface: UnsafePointer<CChar>?, member: UnsafePointer<CChar>,
        signature: UnsafePointer<CChar>
    ) -> ResolvedCall? {
        resolvedMethods.lookup(path: path, interface: interface, member: member, signature: signature)
    }

    mutating func addManager(at path: ObjectPath) {
        managers.insert(path)
        resolvedMethods.removeAll()
    }

    mutating func removeManager(at path: ObjectPath) {
        guard managers.remove(path) != nil else { return }
        resolvedMethods.removeAll()
    }

    /// The object manager responsible for `path`: its nearest strict ancestor that is one.
    func manager(for path: ObjectPath) -> ObjectPath? {
        var candidate = path.parent
        while let current = candidate {
            if managers.contains(current) { return current }
            candidate = current.parent
        }
        return nil
    }

    mutating func add(_ interfaces: [ExportedInterface], at path: ObjectPath) -> [DBusMessage] {
        resolvedMethods.removeAll()
        let existing = objects[path]
        var object = existing ?? Object()
        let listedBefore = Set(existing?.listedNames(conventions) ?? [])
        for interface in interfaces {
            if object.interfaces[interface.name] == nil { object.order.append(interface.name) }
            object.interfaces[interface.name] = interface
        }
        objects[path] = object
        let replaced = Set(interfaces.map(\.name))
        let added = object.listedNames(conventions).filter { !listedBefore.contains($0) || replaced.contains($0) }
        guard let manager = manager(for: path), !added.isEmpty else { return [] }
        let entries = added.map { DBusDictionaryEntry(.string($0.rawValue), properties(of: $0, in: object)) }
        return [
            Self.signal(
                manager, .objectManager, "InterfacesAdded",
                [.objectPath(path), .dictionary(key: .string, value: Self.propertiesType, entries)])
        ]
    }

    mutating func remove(at path: ObjectPath, interfaces names: [InterfaceName]?) -> [DBusMessage] {
        resolvedMethods.removeAll()
        guard var object = objects[path] else { return [] }
        let listedBefore = object.listedNames(conventions)
        let removing = names.map { wanted in object.order.filter { wanted.contains($0) } } ?? object.order
        guard !removing.isEmpty else { return [] }
        for name in removing { object.interfaces[name] = nil }
        object.order.removeAll { removing.contains($0) }
        objects[path] = object.order.isEmpty ? nil : object
        let listedAfter = Set(object.order.isEmpty ? [] : object.listedNames(conventions))
        let gone = listedBefore.filter { !listedAfter.contains($0) }
        guard let manager = manager(for: path) else { return [] }
        return [
            Self.signal(
                manager, .objectManager, "InterfacesRemoved",
                [.objectPath(path), .array(.string, gone.map { .string($0.rawValue) })])
        ]
    }

    func interface(_ name: InterfaceName, at path: ObjectPath) -> ExportedInterface? {
        objects[path]?.interfaces[name]
    }

    /// Stores new values and makes absent properties go; emits one PropertiesChanged for the
    /// lot, following each property's change-signal rule.
    mutating func updateProperties(
        set changes: [(String, DBusValue)], remove removals: [String], interface name: InterfaceName,
        at path: ObjectPath
    ) throws(DBusError) -> PropertiesChange? {
        // Changed in place: a copy of the interface would copy its property dictionary on every
        // change (a GATT read or notification is one).
        guard let (changed, invalidated) = try objects[path]?.interfaces[name]?.apply(changes, removals) else {
            throw DBusError.reply(DBusError.StandardName.unknownInterface, "no interface \(name) at \(path)")
        }
        guard !changed.isEmpty || !invalidated.isEmpty else { return nil }
        return PropertiesChange(path: path, interface: name, changed: changed, invalidated: invalidated)
    }

    /// ``updateProperties(set:remove:interface:at:)`` for one value, with no arrays between;
    /// returns the property's rule for announcing it.
    mutating func updateProperty(
        _ property: String, to value: DBusValue, interface name: InterfaceName, at path: ObjectPath
    ) throws(DBusError) -> ExportedProperty.ChangeSignal {
        guard let rule = try objects[path]?.interfaces[name]?.apply(property, value) else {
            throw DBusError.reply(DBusError.StandardName.unknownInterface, "no interface \(name) at \(path)")
        }
        return rule
    }

    /// `a{oa{sa{sv}}}` of every object below `manager`.
    func managedObjects(under manager: ObjectPath) -> DBusValue {
        var entries: [DBusDictionaryEntry] = []
        for path in objects.keys.sorted() where path.isDescendant(of: manager) {
            entries.append(DBusDictionaryEntry(.objectPath(path), interfacesAndProperties(at: path)))
        }
        return .dictionary(key: .objectPath, value: .dictionary(key: .string, value: Self.propertiesType), entries)
    }

    /// `a{sa{sv}}` of one object.
    func interfacesAndProperties(at path: ObjectPath) -> DBusValue {
        let object = objects[path] ?? Object()
        let entries = object.listedNames(conventions).map {
            DBusDictionaryEntry(.string($0.rawValue), properties(of: $0, in: object))
        }
        return .dictionary(key: .string, value: Self.propertiesType, entries)
    }

    private func properties(of name: InterfaceName, in object: Object) -> DBusValue {
        guard let interface = object.interfaces[name] else {
            return .dictionary(key: .string, value: .variant, [])
        }
        return Self.readableProperties(of: interface)
    }

    /// The names of the direct children of `path` that lead to exported objects.
    func childNames(of path: ObjectPath) -> [String] {
        var names = Set<String>()
        let depth = path.elements.count
        for candidate in objects.keys where candidate.isDescendant(of: path) {
            names.insert(String(candidate.elements[depth]))
        }
        return names.sorted()
    }

    func hasObjects(at path: ObjectPath) -> Bool {
        objects[path] != nil || managers.contains(path) || !childNames(of: path).isEmpty
    }

    static let propertiesType = DBusType.dictionary(key: .string, value: .variant)

    static func readableProperties(of interface: ExportedInterface) -> DBusValue {
        let entries = interface.properties.keys.sorted().compactMap { name -> DBusDictionaryEntry? in
            guard let property = interface.properties[name], property.access != .write, property.isPresent else {
                return nil
            }
            return DBusDictionaryEntry(.string(name), .variant(property.value))
        }
        return .dictionary(key: .string, value: .variant, entries)
    }

    static func signal(
        _ path: ObjectPath, _ interface: InterfaceName, _ member: String, _ body: [DBusValue]
    ) -> DBusMessage {
        DBusMessage(kind: .signal, path: path, interface: interface, member: MemberName(unchecked: member), body: body)
    }
}

extension ExportedInterface {
    /// Checks every change first, so a bad one leaves the interface untouched, then stores
    /// them; returns the changed entries and invalidated names to announce.
    fileprivate mutating func apply(
        _ changes: [(String, DBusValue)], _ removals: [String]
    ) throws(DBusError) -> (changed: [(String, DBusValue)], invalidated: [String]) {
        for (property, value) in changes { _ = try index(storing: value, as: property) }
        for property in removals where properties[property] == nil {
            throw DBusError.reply(DBusError.StandardName.unknownProperty, "no property \(property) on \(name)")
        }
        var changed: [(String, DBusValue)] = []
        changed.reserveCapacity(changes.count)
        var invalidated: [String] = []
        for (property, value) in changes {
            guard let index = properties.index(forKey: property) else { continue }
            switch store(value, at: index) {
            case .emitsValue: changed.append((property, value))
            case .invalidates: invalidated.append(property)
            case .constant, .none: break
            }
        }
        for property in removals where properties[property]?.isPresent == true {
            properties[property]?.isPresent = false
            if properties[property]?.changeSignal != ExportedProperty.ChangeSignal.none {
                invalidated.append(property)
            }
        }
        return (changed, invalidated)
    }

    /// Checks and stores one value; returns the property's rule for announcing it.
    fileprivate mutating func apply(_ property: String, _ value: DBusValue) throws(DBusError)
        -> ExportedProperty.ChangeSignal
    {
        store(value, at: try index(storing: value, as: property))
    }

    /// Where `value` goes, once checked: the property exists and has the value's type, and
    /// the value can travel. Mutating only to reach the property in place: the getter of
    /// `values` would copy it whole.
    private mutating func index(storing value: DBusValue, as property: String) throws(DBusError)
        -> [String: ExportedProperty].Index
    {
        guard let index = properties.index(forKey: property) else {
            throw DBusError.reply(DBusError.StandardName.unknownProperty, "no property \(property) on \(name)")
        }
        try Self.check(value, for: &properties.values[index], named: property)
        return index
    }

    private static func check(_ value: DBusValue, for property: inout ExportedProperty, named name: String)
        throws(DBusError)
    {
        guard value.hasType(property.type) else {
            throw DBusError.reply(
                DBusError.StandardName.invalidArgs,
                "property \(name) has type \(property.type.signature), not \(value.type.signature)")
        }
        // Checked where it will travel: PropertiesChanged leaves it unchecked (see `emit`).
        try value.validate(nestedIn: 3)
    }

    /// Updated in place through the index: no second lookup, no copy of the property.
    private mutating func store(_ value: DBusValue, at index: [String: ExportedProperty].Index)
        -> ExportedProperty.ChangeSignal
    {
        Self.store(value, in: &properties.values[index])
    }

    /// One access to the property for the whole update, not one per field.
    private static func store(_ value: DBusValue, in property: inout ExportedProperty) -> ExportedProperty.ChangeSignal
    {
        property.value = value
        property.isPresent = true
        return property.changeSignal
    }
}
