import CDBus
import Foundation

/// A signal as libdbus received it, for a ``Connection/signalHandler(matchingAny:ended:preview:_:)``
/// preview that takes a frequent signal without building a ``DBusMessage``: each accessor reads
/// the one header field or argument it names.
///
/// Noncopyable and handed over `borrowing`: the received message is valid only while the
/// preview runs, so nothing can keep it.
public struct ReceivedSignal: ~Copyable {
    let raw: OpaquePointer

    init(raw: OpaquePointer) { self.raw = raw }

    /// Whether the signal is `member` of `interface` (header fields compared in place).
    public func `is`(_ member: MemberName, of interface: InterfaceName) -> Bool {
        guard let name = dbus_message_get_member(raw), let iface = dbus_message_get_interface(raw) else {
            return false
        }
        return member.rawValue.withCString { strcmp($0, name) == 0 }
            && interface.rawValue.withCString { strcmp($0, iface) == 0 }
    }

    /// Whether the sender is `name` (a unique name: the bus sets the sender field to one).
    public func isSent(by name: BusName) -> Bool {
        guard let sender = dbus_message_get_sender(raw) else { return false }
        return name.rawValue.withCString { strcmp($0, sender) == 0 }
    }

    /// Whether the object path that emitted it is `path` (compared in place: no text is made).
    public func hasPath(_ path: ObjectPath) -> Bool {
        guard let own = dbus_message_get_path(raw) else { return false }
        return path.rawValue.withCString { strcmp($0, own) == 0 }
    }

    /// The object path that emitted it (libdbus validated it on arrival).
    public var path: ObjectPath? { dbus_message_get_path(raw).map { ObjectPath(unchecked: String(cString: $0)) } }

    /// The serial the sender gave it, which orders it against the sender's replies.
    public var serial: UInt32 { dbus_message_get_serial(raw) }

    /// Whether the body's signature is `expected` (compared in place).
    func hasSignature(_ expected: StaticString) -> Bool {
        guard let signature = dbus_message_get_signature(raw) else { return false }
        return strcmp(signature, UnsafeRawPointer(expected.utf8Start).assumingMemoryBound(to: CChar.self)) == 0
    }

    /// For a `PropertiesChanged(s, a{sv}, as)` of `interface` that changes exactly `property`,
    /// to a byte array, and invalidates nothing: the bytes. `nil` for any other body.
    public func changedBytes(interface: InterfaceName, property: String) -> Data? {
        guard hasSignature("sa{sv}as") else { return nil }
        return changedBytesOfCheckedBody(interface: interface, property: property)
    }

    /// ``changedBytes(interface:property:)`` for a body whose signature (`sa{sv}as`) was
    /// checked, read with libdbus's iterators and stepping only where the signature leaves a
    /// choice. Copying the message out of libdbus (`dbus_message_marshal`) to read it in place
    /// took as many instructions in all, but grows its copy with `realloc`, code nothing else
    /// runs per notification: a paced notification (one per wake-up, cold caches) missed about
    /// a hundred more instruction-cache lines that way.
    func changedBytesOfCheckedBody(interface: InterfaceName, property: String) -> Data? {
        var arguments = DBusMessageIter()
        guard dbus_message_iter_init(raw, &arguments) != 0, Self.string(&arguments, equals: interface.rawValue),
            dbus_message_iter_next(&arguments) != 0
        else { return nil }
        var entries = DBusMessageIter()
        dbus_message_iter_recurse(&arguments, &entries)
        // An empty dictionary has no entry to step into.
        guard dbus_message_iter_get_arg_type(&entries) == TypeCode.dictEntry else { return nil }
        var entry = DBusMessageIter()
        dbus_message_iter_recurse(&entries, &entry)
        guard Self.string(&entry, equals: property), dbus_message_iter_next(&entry) != 0 else { return nil }
        var variant = DBusMessageIter()
        dbus_message_iter_recurse(&entry, &variant)
        guard dbus_message_iter_get_arg_type(&variant) == TypeCode.array,
            dbus_message_iter_get_element_type(&variant) == TypeCode.byte,
            // Exactly one changed property, and nothing invalidated.
            dbus_message_iter_next(&entries) == 0, dbus_message_iter_next(&arguments) != 0,
            dbus_message_iter_get_element_count(&arguments) == 0
        else { return nil }
        var bytes = DBusMessageIter()
        dbus_message_iter_recurse(&variant, &bytes)
        return MessageDecoder.bytes(&bytes)
    }

    /// For an `ObjectManager.InterfacesAdded(o, a{sa{sv}})`: the object's path and its
    /// interfaces' properties, each value taken out of its variant, decoded straight from the
    /// message (no ``DBusMessage``, no intermediate ``DBusValue`` dictionaries). `nil` for any
    /// other body, or an interface name that is not valid.
    ///
    /// Names among `known` (the interfaces the caller expects, plus D-Bus's own `Properties`
    /// and `Introspectable`) are recognised by comparing bytes and reused as they are: every
    /// advertiser's first signal names three interfaces, and building and validating each name
    /// anew was a tenth of a scan's cost. Others are validated.
    public func interfacesAdded(
        known: [InterfaceName] = []
    ) -> (path: ObjectPath, interfaces: [InterfaceName: [String: DBusValue]])? {
        guard hasSignature("oa{sa{sv}}") else { return nil }
        let read = WireDecoder.withBody(of: raw) { decoder, _ in
            decoder.string().flatMap { path in
                decoder.interfaces(known: known, depth: 0).map { (ObjectPath(unchecked: path), $0) }
            }
        }
        return read ?? interfacesAddedThroughIterators(known: known)
    }

    /// ``interfacesAdded(known:)`` read with libdbus's iterators: what a message the wire
    /// reader does not take is decoded with.
    func interfacesAddedThroughIterators(
        known: [InterfaceName]
    ) -> (path: ObjectPath, interfaces: [InterfaceName: [String: DBusValue]])? {
        var arguments = DBusMessageIter()
        guard dbus_message_iter_init(raw, &arguments) != 0 else { return nil }
        var pathText: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&arguments, &pathText)
        guard let pathText, dbus_message_iter_next(&arguments) != 0 else { return nil }
        var entries = DBusMessageIter()
        dbus_message_iter_recurse(&arguments, &entries)
        // BlueZ's objects have three interfaces (their own, Properties and Introspectable): room
        // for them at once, where growing from empty reallocated twice per advertiser. (Counting
        // the entries first would walk every property of every interface.)
        var interfaces = [InterfaceName: [String: DBusValue]](room: 3)
        while dbus_message_iter_get_arg_type(&entries) == TypeCode.dictEntry {
            var entry = DBusMessageIter()
            dbus_message_iter_recurse(&entries, &entry)
            var nameText: UnsafePointer<CChar>?
            dbus_message_iter_get_basic(&entry, &nameText)
            guard let nameText, let name = Self.interfaceName(nameText, known: known),
                dbus_message_iter_next(&entry) != 0
            else { return nil }
            guard let properties = Self.properties(&entry) else { return nil }
            interfaces[name] = properties
            dbus_message_iter_next(&entries)
        }
        return (ObjectPath(unchecked: String(cString: pathText)), interfaces)
    }

    /// For a `Properties.PropertiesChanged(s, a{sv}, as)`: the interface, the changed
    /// properties (each value taken out of its variant) and the invalidated names, decoded
    /// straight from the message, with the interface among `known` recognised by its bytes (as
    /// in ``interfacesAdded(known:)``: a device's every change names `Device1`, and building and
    /// validating it anew cost more than the rest of the decoding). `nil` for any other body,
    /// or an interface name that is not valid.
    public func propertiesChanged(
        known: [InterfaceName] = []
    ) -> (interface: InterfaceName, changed: [String: DBusValue], invalidated: [String])? {
        guard hasSignature("sa{sv}as") else { return nil }
        return propertiesChangedOfCheckedBody(known: known)
    }

    /// ``propertiesChanged(known:)`` for a body whose signature (`sa{sv}as`) was checked.
    func propertiesChangedOfCheckedBody(
        known: [InterfaceName]
    ) -> (interface: InterfaceName, changed: [String: DBusValue], invalidated: [String])? {
        let read = WireDecoder.withBody(of: raw) { decoder, _ in decoder.propertiesChanged(known: known) }
        return read ?? propertiesChangedThroughIterators(known: known)
    }

    /// ``propertiesChanged(known:)`` read with libdbus's iterators (see
    /// ``interfacesAddedThroughIterators(known:)``).
    func propertiesChangedThroughIterators(
        known: [InterfaceName]
    ) -> (interface: InterfaceName, changed: [String: DBusValue], invalidated: [String])? {
        var arguments = DBusMessageIter()
        guard dbus_message_iter_init(raw, &arguments) != 0 else { return nil }
        var nameText: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&arguments, &nameText)
        guard let nameText, let name = Self.interfaceName(nameText, known: known),
            dbus_message_iter_next(&arguments) != 0, let changed = Self.properties(&arguments),
            dbus_message_iter_next(&arguments) != 0
        else { return nil }
        var names = DBusMessageIter()
        dbus_message_iter_recurse(&arguments, &names)
        var invalidated: [String] = []
        while dbus_message_iter_get_arg_type(&names) == TypeCode.string {
            var text: UnsafePointer<CChar>?
            dbus_message_iter_get_basic(&names, &text)
            guard let text else { return nil }
            invalidated.append(String(cString: text))
            dbus_message_iter_next(&names)
        }
        return (name, changed, invalidated)
    }

    private static let ownInterfaces: [InterfaceName] = [.properties, .introspectable]

    /// `text` as an interface name: one of `known` (or D-Bus's own) when the bytes match, else
    /// validated; nil when not valid.
    private static func interfaceName(_ text: UnsafePointer<CChar>, known: [InterfaceName]) -> InterfaceName? {
        for candidate in known where candidate.rawValue.withCString({ strcmp($0, text) == 0 }) { return candidate }
        for candidate in ownInterfaces where candidate.rawValue.withCString({ strcmp($0, text) == 0 }) {
            return candidate
        }
        return try? InterfaceName(String(cString: text))
    }

    /// The `a{sv}` at `iterator`, each value taken out of its variant.
    private static func properties(_ iterator: inout DBusMessageIter) -> [String: DBusValue]? {
        // Sized once: grown entry by entry, a device's dozen properties reallocated it four
        // times. Counting walks the entries, which costs less.
        let count = Int(dbus_message_iter_get_element_count(&iterator))
        var entries = DBusMessageIter()
        dbus_message_iter_recurse(&iterator, &entries)
        var properties = [String: DBusValue](room: count)
        while dbus_message_iter_get_arg_type(&entries) == TypeCode.dictEntry {
            var entry = DBusMessageIter()
            dbus_message_iter_recurse(&entries, &entry)
            var keyText: UnsafePointer<CChar>?
            dbus_message_iter_get_basic(&entry, &keyText)
            guard let keyText, dbus_message_iter_next(&entry) != 0 else { return nil }
            var variant = DBusMessageIter()
            dbus_message_iter_recurse(&entry, &variant)
            guard let value = try? MessageDecoder.readValue(&variant) else { return nil }
            properties[String(cString: keyText)] = value
            dbus_message_iter_next(&entries)
        }
        return properties
    }

    private static func string(_ iterator: inout DBusMessageIter, equals expected: String) -> Bool {
        var value: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iterator, &value)
        guard let value else { return false }
        return expected.withCString { strcmp($0, value) == 0 }
    }
}
