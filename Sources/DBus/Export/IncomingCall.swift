/// What the object table says about an incoming method call, decided under its lock; the
/// I/O thread then acts on it outside the lock.
enum IncomingCall: Sendable {
    case reply([DBusValue])
    case error(String, String)
    case invoke(InvokedMethod)
    case setProperty(interface: InterfaceName, name: String, value: DBusValue, property: ExportedProperty)
    /// Allowed only when the caller is `sender` (see ``ExportedInterface/acceptedSender``).
    indirect case restricted(to: BusName, IncomingCall)

    /// Resolves `call`, whose body has `signature` (as read off the wire), against the
    /// exported objects and the standard interfaces.
    static func resolve(_ call: DBusMessage, signature: String, in table: ObjectTable) -> IncomingCall {
        guard let path = call.path, let member = call.member else {
            return .error(DBusError.StandardName.unknownMethod, "call without path or member")
        }
        switch call.interface {
        case InterfaceName.introspectable? where member.rawValue == "Introspect":
            guard table.hasObjects(at: path) || path == .root else {
                return .error(DBusError.StandardName.unknownObject, "no object at \(path)")
            }
            return .reply([.string(Introspection.xml(for: path, in: table))])
        case InterfaceName.properties?:
            return resolveProperties(call, signature: signature, member: member.rawValue, path: path, table: table)
        case InterfaceName.objectManager? where member.rawValue == "GetManagedObjects":
            guard table.managers.contains(path) else {
                return .error(DBusError.StandardName.unknownMethod, "no object manager at \(path)")
            }
            return .reply([table.managedObjects(under: path)])
        default:
            return resolveMethod(call, signature: signature, member: member, path: path, table: table)
        }
    }

    private static func resolveMethod(
        _ call: DBusMessage, signature: String, member: MemberName, path: ObjectPath, table: ObjectTable
    ) -> IncomingCall {
        let gdbus = table.conventions == .gdbus
        guard let object = table.objects[path] else {
            return .error(
                DBusError.StandardName.unknownObject,
                gdbus ? notFoundText(call, member) : "no object at \(path.rawValue)")
        }
        let method: ExportedMethod?
        let acceptedSender: BusName?
        if let interfaceName = call.interface {
            guard let interface = object.interfaces[interfaceName] else {
                if gdbus { return .error(DBusError.StandardName.unknownMethod, notFoundText(call, member)) }
                return .error(DBusError.StandardName.unknownInterface, "no interface \(interfaceName) at \(path)")
            }
            method = interface.methods[member]
            acceptedSender = interface.acceptedSender
        } else {
            let interface = object.order.lazy.compactMap { object.interfaces[$0] }.first { $0.methods[member] != nil }
            method = interface?.methods[member]
            acceptedSender = interface?.acceptedSender
        }
        guard let method else {
            return .error(
                DBusError.StandardName.unknownMethod,
                gdbus ? notFoundText(call, member) : "no method \(member) at \(path)")
        }
        guard signature == method.inSignature.rawValue else {
            // gdbus skips a handler whose signature does not match, so the method "does not exist".
            if gdbus { return .error(DBusError.StandardName.unknownMethod, notFoundText(call, member)) }
            return .error(
                DBusError.StandardName.invalidArgs,
                "\(member) takes (\(method.inSignature.rawValue)), got (\(signature))")
        }
        return restricting(.invoke(InvokedMethod(method)), to: acceptedSender)
    }

    private static func restricting(_ resolution: IncomingCall, to sender: BusName?) -> IncomingCall {
        guard let sender else { return resolution }
        return .restricted(to: sender, resolution)
    }

    /// libdbus's text for a call nothing handles, which gdbus also uses.
    private static func notFoundText(_ call: DBusMessage, _ member: MemberName) -> String {
        "Method \"\(member.rawValue)\" with signature \"\(call.signature)\" on interface "
            + "\"\(call.interface?.rawValue ?? "(null)")\" doesn't exist\n"
    }

    private static func resolveProperties(
        _ call: DBusMessage, signature callSignature: String, member: String, path: ObjectPath, table: ObjectTable
    ) -> IncomingCall {
        let gdbus = table.conventions == .gdbus
        let expected = ["Get": "ss", "GetAll": "s", "Set": "ssv"]
        // libdbus answers a path without an object before any method lookup, and gdbus treats a
        // signature mismatch as a missing method, both with libdbus's text.
        if gdbus, let name = call.member {
            guard table.objects[path] != nil else {
                return .error(DBusError.StandardName.unknownObject, notFoundText(call, name))
            }
            guard expected[member] == callSignature else {
                return .error(DBusError.StandardName.unknownMethod, notFoundText(call, name))
            }
        }
        guard let signature = expected[member] else {
            return .error(DBusError.StandardName.unknownMethod, "no method \(member) on Properties")
        }
        guard callSignature == signature, case .string(let interfaceText) = call.body[0] else {
            return .error(DBusError.StandardName.invalidArgs, "Properties.\(member) takes (\(signature))")
        }
        guard table.objects[path] != nil else {
            return .error(DBusError.StandardName.unknownObject, "no object at \(path.rawValue)")
        }
        guard let interfaceName = try? InterfaceName(interfaceText),
            let interface = table.interface(interfaceName, at: path)
        else {
            if gdbus { return .error(DBusError.StandardName.invalidArgs, "No such interface '\(interfaceText)'") }
            return .error(DBusError.StandardName.unknownInterface, "no interface \(interfaceText) at \(path)")
        }
        if member == "GetAll" { return .reply([ObjectTable.readableProperties(of: interface)]) }
        guard case .string(let name) = call.body[1] else {
            return .error(DBusError.StandardName.invalidArgs, "Properties.\(member) takes (\(signature))")
        }
        if member == "Get" {
            guard let property = interface.properties[name], property.isPresent else {
                if gdbus { return .error(DBusError.StandardName.invalidArgs, "No such property '\(name)'") }
                return .error(DBusError.StandardName.unknownProperty, "no property \(name) on \(interfaceText)")
            }
            guard property.access != .write else {
                if gdbus { return .error(DBusError.StandardName.invalidArgs, "Property '\(name)' is not readable") }
                return .error(DBusError.StandardName.accessDenied, "property \(name) is write-only")
            }
            return .reply([.variant(property.value)])
        }
        guard let property = interface.properties[name] else {
            return .error(
                DBusError.StandardName.unknownProperty,
                gdbus ? "No such property '\(name)'" : "no property \(name) on \(interfaceText)")
        }
        guard property.access != .read else {
            return .error(
                DBusError.StandardName.propertyReadOnly,
                gdbus ? "Property '\(name)' is not writable" : "property \(name) is read-only")
        }
        guard case .variant(let value) = call.body[2], value.hasType(property.type) else {
            if gdbus { return .error(invalidSignature, "Invalid signature for '\(name)'") }
            return .error(
                DBusError.StandardName.invalidArgs, "property \(name) has type \(property.type.signature)")
        }
        if let answer = property.deferredSet, let setName = call.member {
            // Answered like a deferred method: the setter replies and stores when it chooses.
            let set = ExportedMethod.deferred(setName) { _, reply in answer(value, reply) }
            return restricting(.invoke(InvokedMethod(set)), to: interface.acceptedSender)
        }
        return restricting(
            .setProperty(interface: interfaceName, name: name, value: value, property: property),
            to: interface.acceptedSender)
    }

    private static let invalidSignature = "org.freedesktop.DBus.Error.InvalidSignature"
}

/// The method a call resolved to, boxed: a resolution is kept, handed out and matched on every
/// call, and a box is one reference to copy where the method is a name, two signatures and a
/// handler.
final class InvokedMethod: Sendable {
    let method: ExportedMethod

    init(_ method: ExportedMethod) {
        self.method = method
    }
}
