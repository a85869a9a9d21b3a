import DBus

extension ObjectTreeEvent {
    /// Decodes `message` if it is one of the three signals that change an object tree:
    /// `ObjectManager.InterfacesAdded` (`oa{sa{sv}}`), `ObjectManager.InterfacesRemoved` (`oas`)
    /// or `Properties.PropertiesChanged` (`sa{sv}as`, for the object at the message's path).
    /// Returns `nil` for any other message.
    ///
    /// The sender is not checked: subscribe with a match rule for bluetoothd's unique name.
    ///
    /// - Throws: ``DBus/DBusError`` with code `.typeMismatch` when the body does not have the
    ///   signal's signature, or names an invalid interface.
    public init?(signal message: DBusMessage) throws(DBusError) {
        guard message.kind == .signal, let interface = message.interface, let member = message.member else {
            return nil
        }
        switch (interface, member) {
        case (.objectManager, BlueZSignal.interfacesAdded):
            let body = try Self.body(of: message, signature: "oa{sa{sv}}")
            guard case .objectPath(let path) = body[0] else { throw Self.bodyMismatch(message, "oa{sa{sv}}") }
            let interfaces = try Self.context(message) { () throws(DBusError) in
                try ObjectManagerCoding.decodeInterfaces(body[1])
            }
            self = .interfacesAdded(path, interfaces)
        case (.objectManager, BlueZSignal.interfacesRemoved):
            let body = try Self.body(of: message, signature: "oas")
            guard case .objectPath(let path) = body[0], case .array(_, let elements) = body[1] else {
                throw Self.bodyMismatch(message, "oas")
            }
            var names: [InterfaceName] = []
            for element in elements {
                guard case .string(let text) = element else { throw Self.bodyMismatch(message, "oas") }
                names.append(try Self.context(message) { () throws(DBusError) in try InterfaceName(text) })
            }
            self = .interfacesRemoved(path, names)
        case (.properties, BlueZSignal.propertiesChanged):
            let body = try Self.body(of: message, signature: "sa{sv}as")
            guard let path = message.path else {
                throw DBusError(.typeMismatch, message: "PropertiesChanged: the signal has no path")
            }
            guard case .string(let text) = body[0], case .array(_, let elements) = body[2] else {
                throw Self.bodyMismatch(message, "sa{sv}as")
            }
            let name = try Self.context(message) { () throws(DBusError) in try InterfaceName(text) }
            let changed = try Self.context(message) { () throws(DBusError) in
                try ObjectManagerCoding.decodeProperties(body[1])
            }
            var invalidated: [String] = []
            for element in elements {
                guard case .string(let key) = element else { throw Self.bodyMismatch(message, "sa{sv}as") }
                invalidated.append(key)
            }
            self = .propertiesChanged(path, name, changed: changed, invalidated: invalidated)
        default:
            return nil
        }
    }

    /// Decodes the reply to `GetManagedObjects` (`a{oa{sa{sv}}}`) as a ``snapshot(_:)``.
    ///
    /// - Throws: the reply's error when it is an error reply (code `.remote`); ``DBus/DBusError``
    ///   with code `.typeMismatch` when it is not a method return with that signature.
    public init(managedObjectsReply message: DBusMessage) throws(DBusError) {
        if let error = message.error { throw error }
        guard message.kind == .methodReturn else {
            throw DBusError(.typeMismatch, message: "GetManagedObjects: expected a method return")
        }
        let body = try Self.body(of: message, signature: "a{oa{sa{sv}}}")
        self = .snapshot(
            try Self.context(message) { () throws(DBusError) in try ObjectManagerCoding.decodeManagedObjects(body[0]) })
    }

    /// The signal bluetoothd would emit for this event, or `nil` for ``snapshot(_:)`` and
    /// ``reset``, which are not signals. `InterfacesAdded`/`InterfacesRemoved` come from
    /// `objectManager` (bluetoothd: `/`), `PropertiesChanged` from the object itself.
    public func signalMessage(objectManager: ObjectPath = BlueZService.rootPath) -> DBusMessage? {
        switch self {
        case .snapshot, .reset:
            return nil
        case .interfacesAdded(let path, let interfaces):
            return DBusMessage(
                kind: .signal, path: objectManager, interface: .objectManager, member: BlueZSignal.interfacesAdded,
                body: [.objectPath(path), ObjectManagerCoding.encodeInterfaces(interfaces)])
        case .interfacesRemoved(let path, let names):
            return DBusMessage(
                kind: .signal, path: objectManager, interface: .objectManager, member: BlueZSignal.interfacesRemoved,
                body: [.objectPath(path), .array(.string, names.map { .string($0.rawValue) })])
        case .propertiesChanged(let path, let interface, let changed, let invalidated):
            return DBusMessage(
                kind: .signal, path: path, interface: .properties, member: BlueZSignal.propertiesChanged,
                body: [
                    .string(interface.rawValue), ObjectManagerCoding.encodeProperties(changed),
                    .array(.string, invalidated.map { .string($0) }),
                ])
        }
    }

    // MARK: Helpers

    /// The body, checked against `signature`.
    private static func body(of message: DBusMessage, signature: String) throws(DBusError) -> [DBusValue] {
        guard message.signature == signature else { throw bodyMismatch(message, signature) }
        return message.body
    }

    private static func bodyMismatch(_ message: DBusMessage, _ signature: String) -> DBusError {
        DBusError(
            .typeMismatch,
            message: "\(name(of: message)): expected body \(signature), got \(message.signature)")
    }

    /// Runs `body`, prefixing any error message with the message's member and making it a
    /// type mismatch.
    private static func context<T>(
        _ message: DBusMessage, _ body: () throws(DBusError) -> T
    ) throws(DBusError) -> T {
        do {
            return try body()
        } catch {
            throw DBusError(.typeMismatch, message: "\(name(of: message)): \(error.message)")
        }
    }

    private static func name(of message: DBusMessage) -> String {
        message.member?.rawValue ?? "GetManagedObjects"
    }
}
