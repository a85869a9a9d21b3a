import CDBus
import Foundation

/// Turns a libdbus message into a ``DBusMessage``.
///
/// libdbus has already validated incoming messages on the wire (UTF-8, paths, signatures,
/// nesting), so header fields are taken as they are; the body is still decoded defensively and
/// any inconsistency becomes a ``DBusError`` instead of a crash.
enum MessageDecoder {
    static func decode(_ message: OpaquePointer) throws(DBusError) -> DBusMessage {
        var names = RecentBusNames()
        return try decode(message, names: &names)
    }

    /// As ``decode(_:)``, with the sender and destination taken from `names` when they are the
    /// last message's (a client's replies come from the few services it calls, to its one
    /// name; making both strings anew was two scans and validations per call).
    static func decode(_ message: OpaquePointer, names: inout RecentBusNames) throws(DBusError) -> DBusMessage {
        var result = try decodeHeader(message, names: &names)
        result.body = try decodeBody(message)
        return result
    }

    /// The header fields only, so routing can skip decoding bodies nobody wants.
    static func decodeHeader(_ message: OpaquePointer) throws(DBusError) -> DBusMessage {
        var names = RecentBusNames()
        return try decodeHeader(message, names: &names)
    }

    /// The header fields, the bus names reused from `names` where it holds them.
    private static func decodeHeader(
        _ message: OpaquePointer, names: inout RecentBusNames
    ) throws(DBusError) -> DBusMessage {
        let kind: DBusMessage.Kind
        switch dbus_message_get_type(message) {
        case MessageTypeCode.methodCall: kind = .methodCall
        case MessageTypeCode.methodReturn: kind = .methodReturn
        case MessageTypeCode.error: kind = .error
        case MessageTypeCode.signal: kind = .signal
        default: throw DBusError(.invalidValue, message: "message of unknown type")
        }
        var result = DBusMessage(kind: kind)
        // Each field is a search of the header: only the kinds that have one look.
        if kind == .methodCall || kind == .signal {
            result.path = dbus_message_get_path(message).map { ObjectPath(unchecked: String(cString: $0)) }
            result.interface = dbus_message_get_interface(message).map {
                InterfaceName(unchecked: String(cString: $0))
            }
            result.member = dbus_message_get_member(message).map { MemberName(unchecked: String(cString: $0)) }
        }
        if kind == .error {
            result.errorName = dbus_message_get_error_name(message).map { String(cString: $0) }
        }
        result.sender = dbus_message_get_sender(message).map { names.sender($0) }
        result.destination = dbus_message_get_destination(message).map { names.destination($0) }
        result.serial = dbus_message_get_serial(message)
        if kind == .methodReturn || kind == .error { result.replySerial = dbus_message_get_reply_serial(message) }
        result.noReplyExpected = dbus_message_get_no_reply(message) != 0
        return result
    }

    /// A method call whose names are known already (see ``ResolvedCall``): only the rest of
    /// its header and its body are read.
    static func decodeCall(
        _ message: OpaquePointer, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        names: inout RecentBusNames
    ) throws(DBusError) -> DBusMessage {
        DBusMessage(
            kind: .methodCall, path: path, interface: interface, member: member,
            sender: dbus_message_get_sender(message).map { names.sender($0) },
            destination: dbus_message_get_destination(message).map { names.destination($0) },
            serial: dbus_message_get_serial(message), noReplyExpected: dbus_message_get_no_reply(message) != 0,
            body: try decodeBody(message))
    }

    static func decodeBody(_ message: OpaquePointer) throws(DBusError) -> [DBusValue] {
        // Bodies with dictionaries (property maps, object managers) hold many values: read from
        // the wire form at once (see ``WireDecoder``). Others have a few, which the iterators
        // read for less than copying the message out would cost.
        if let signature = dbus_message_get_signature(message), strchr(signature, Int32(UInt8(ascii: "{"))) != nil,
            let values = WireDecoder.withBody(of: message, { decoder, codes in decoder.body(codes) })
        {
            return values
        }
        return try decodeBodyThroughIterators(message)
    }

    /// The body read with libdbus's iterators: every body the wire reader does not take
    /// (those with file descriptors among them).
    static func decodeBodyThroughIterators(_ message: OpaquePointer) throws(DBusError) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        var values: [DBusValue] = []
        // Most bodies have a few arguments: room for them at once, not grown one by one.
        values.reserveCapacity(4)
        while dbus_message_iter_get_arg_type(&iter) != TypeCode.invalid {
            values.append(try readValue(&iter))
            dbus_message_iter_next(&iter)
        }
        return values
    }

    static func readValue(_ iter: inout DBusMessageIter) throws(DBusError) -> DBusValue {
        let code = dbus_message_iter_get_arg_type(&iter)
        switch code {
        case TypeCode.byte: return .byte(basic(&iter, UInt8(0)))
        case TypeCode.boolean: return .boolean(basic(&iter, dbus_bool_t(0)) != 0)
        case TypeCode.int16: return .int16(basic(&iter, Int16(0)))
        case TypeCode.uint16: return .uint16(basic(&iter, UInt16(0)))
        case TypeCode.int32: return .int32(basic(&iter, Int32(0)))
        case TypeCode.uint32: return .uint32(basic(&iter, UInt32(0)))
        case TypeCode.int64: return .int64(basic(&iter, Int64(0)))
        case TypeCode.uint64: return .uint64(basic(&iter, UInt64(0)))
        case TypeCode.double: return .double(basic(&iter, Double(0)))
        case TypeCode.unixFD: return .unixFD(FileDescriptor(owning: basic(&iter, Int32(-1))))
        case TypeCode.string: return .string(string(&iter))
        case TypeCode.objectPath: return .objectPath(ObjectPath(unchecked: string(&iter)))
        case TypeCode.signature: return .signature(try Signature(string(&iter)))
        case TypeCode.variant:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &inner)
            return .variant(try readValue(&inner))
        case TypeCode.structure:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &inner)
            var fields: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&inner) != TypeCode.invalid {
                fields.append(try readValue(&inner))
                dbus_message_iter_next(&inner)
            }
            return .structure(fields)
        case TypeCode.array:
            return try readArray(&iter)
        default:
            throw DBusError(.invalidValue, message: "unsupported type code \(code) in message body")
        }
    }

    /// The bytes of an `ay` whose elements `inner` iterates, copied at once.
    static func bytes(_ inner: inout DBusMessageIter) -> Data {
        var pointer: UnsafeMutableRawPointer?
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(&inner, &pointer, &count)
        guard let pointer, count > 0 else { return Data() }
        return Data(bytes: pointer, count: Int(count))
    }

    private static func readArray(_ iter: inout DBusMessageIter) throws(DBusError) -> DBusValue {
        let elementCode = dbus_message_iter_get_element_type(&iter)
        var inner = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &inner)
        if elementCode == TypeCode.byte { return .bytes(bytes(&inner)) }
        let arrayType = try containerType(&iter)
        switch arrayType {
        case .dictionary(let key, let value):
            var entries: [DBusDictionaryEntry] = []
            while dbus_message_iter_get_arg_type(&inner) == TypeCode.dictEntry {
                var entry = DBusMessageIter()
                dbus_message_iter_recurse(&inner, &entry)
                let k = try readValue(&entry)
                guard dbus_message_iter_next(&entry) != 0 else {
                    throw DBusError(.invalidValue, message: "dictionary entry without a value")
                }
                entries.append(DBusDictionaryEntry(k, try readValue(&entry)))
                dbus_message_iter_next(&inner)
            }
            return .dictionary(key: key, value: value, entries)
        case .array(let element):
            var elements: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&inner) != TypeCode.invalid {
                elements.append(try readValue(&inner))
                dbus_message_iter_next(&inner)
            }
            return .array(element, elements)
        default:
            throw DBusError(.invalidValue, message: "array with signature \(arrayType.signature)")
        }
    }

    /// The full type of the container at `iter`, needed because an empty array still has one.
    private static func containerType(_ iter: inout DBusMessageIter) throws(DBusError) -> DBusType {
        guard let raw = dbus_message_iter_get_signature(&iter) else {
            throw DBusError(.limitExceeded, message: "out of memory reading a signature")
        }
        defer { dbus_free(raw) }
        // Options, property and interface dicts: most containers have one of a few signatures.
        for (code, type) in commonContainers
        where strcmp(raw, UnsafeRawPointer(code.utf8Start).assumingMemoryBound(to: CChar.self)) == 0 {
            return type
        }
        let signature = try Signature(String(cString: raw))
        guard let type = signature.types.first, signature.types.count == 1 else {
            throw DBusError(.invalidValue, message: "container signature \(signature.rawValue)")
        }
        return type
    }

    private static let commonContainers: [(StaticString, DBusType)] = [
        ("a{sv}", .dictionary(key: .string, value: .variant)),
        ("as", .array(.string)),
        ("ao", .array(.objectPath)),
        ("a{sa{sv}}", .dictionary(key: .string, value: .dictionary(key: .string, value: .variant))),
        // Manufacturer and advertising data maps: in most advertisements a scan reports.
        ("a{qv}", .dictionary(key: .uint16, value: .variant)),
        ("a{yv}", .dictionary(key: .byte, value: .variant)),
    ]

    private static func basic<T>(_ iter: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iter, $0) }
        return value
    }

    private static func string(_ iter: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>?
        withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_basic(&iter, $0) }
        guard let pointer else { return "" }
        return String(cString: pointer)
    }
}
