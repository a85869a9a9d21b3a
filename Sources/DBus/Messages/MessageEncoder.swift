import CDBus
import Foundation

/// Builds a libdbus message from a ``DBusMessage``.
///
/// libdbus aborts the process when handed an invalid string, path or signature, so every value
/// is validated before the first byte is appended.
enum MessageEncoder {
    /// Returns an owned libdbus message (the caller unrefs it). `valuesValidated` skips the
    /// check of the body's values, for bodies built only from values checked already.
    static func encode(_ message: DBusMessage, valuesValidated: Bool = false) throws(DBusError) -> OpaquePointer {
        try validate(message, valuesValidated: valuesValidated)
        guard let raw = try makeHeader(message) else {
            throw DBusError(.limitExceeded, message: "out of memory creating a message")
        }
        if message.noReplyExpected { dbus_message_set_no_reply(raw, 1) }
        do {
            try appendBody(message.body, to: raw)
        } catch {
            dbus_message_unref(raw)
            throw error
        }
        return raw
    }

    /// Checks what libdbus would abort on and what the bus would drop the connection for, so
    /// that a bad message is a thrown error instead: the values, the body signature's length,
    /// the fields each kind of message needs, and the reserved `org.freedesktop.DBus.Local`.
    static func validate(_ message: DBusMessage, valuesValidated: Bool = false) throws(DBusError) {
        try validate(body: message.body, valuesValidated: valuesValidated)
        if message.path?.rawValue == localName.path || message.interface?.rawValue == localName.interface {
            throw DBusError(.invalidValue, message: "org.freedesktop.DBus.Local is reserved to libdbus, never sent")
        }
        switch message.kind {
        case .methodCall:
            if message.path == nil || message.member == nil {
                throw DBusError(.invalidValue, message: "a method call needs a path and a member")
            }
        case .signal:
            if message.path == nil || message.interface == nil || message.member == nil {
                throw DBusError(.invalidValue, message: "a signal needs a path, an interface and a member")
            }
        case .methodReturn, .error:
            if message.replySerial == 0 {
                throw DBusError(.invalidValue, message: "a reply needs the serial of the call it answers")
            }
            if message.kind == .error, let name = message.errorName, (try? ErrorName(name)) == nil {
                throw DBusError(.invalidName, message: "invalid error name \(name)")
            }
        }
    }

    /// The body's part of ``validate(_:valuesValidated:)``: its values and its signature's length.
    private static func validate(body: [DBusValue], valuesValidated: Bool) throws(DBusError) {
        var signatureLength = 0
        for value in body {
            if !valuesValidated { try value.validate() }
            signatureLength += value.signatureLength
        }
        try limit(bodySignature: signatureLength)
    }

    private static func limit(bodySignature length: Int) throws(DBusError) {
        if length > NameValidation.maximumLength {
            throw DBusError(
                .invalidValue,
                message: "the body's signature would be \(length) bytes long, more than the maximum of "
                    + "\(NameValidation.maximumLength)")
        }
    }

    /// A method return to `call` carrying `values`, built with no ``DBusMessage`` between:
    /// libdbus takes the destination and the reply serial from the call itself. Returns an
    /// owned message.
    static func methodReturn(to call: OpaquePointer, _ values: [DBusValue]) throws(DBusError) -> OpaquePointer {
        try validate(body: values, valuesValidated: false)
        guard let raw = dbus_message_new_method_return(call) else {
            throw DBusError(.limitExceeded, message: "out of memory creating a message")
        }
        dbus_message_set_no_reply(raw, 1)
        do {
            try appendBody(values, to: raw)
        } catch {
            dbus_message_unref(raw)
            throw error
        }
        return raw
    }

    /// ``methodReturn(to:_:)`` carrying one value, with no array between.
    static func methodReturn(to call: OpaquePointer, _ value: DBusValue) throws(DBusError) -> OpaquePointer {
        try value.validate()
        try limit(bodySignature: value.signatureLength)
        guard let raw = dbus_message_new_method_return(call) else {
            throw DBusError(.limitExceeded, message: "out of memory creating a message")
        }
        dbus_message_set_no_reply(raw, 1)
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(raw, &iter)
        do {
            try append(value, to: &iter)
        } catch {
            dbus_message_unref(raw)
            throw error
        }
        return raw
    }

    /// `PropertiesChanged(s a{sv} as)` for `change`, appended straight from its parts. Its
    /// values were validated when the table stored them, and its names when they were exported.
    static func propertiesChanged(_ change: PropertiesChange) throws(DBusError) -> OpaquePointer {
        try propertiesChanged(
            path: change.path, interface: change.interface,
            changed: { (entries: inout DBusMessageIter) throws(DBusError) in
                for (name, value) in change.changed { try appendChange(name, value, to: &entries) }
            },
            invalidated: { (names: inout DBusMessageIter) throws(DBusError) in
                for name in change.invalidated where !appendString(&names, TypeCode.string, name) { throw outOfMemory }
            })
    }

    /// ``propertiesChanged(_:)`` for one property, with no arrays at all: its new `value`, or
    /// its name alone among the invalidated when `value` is `nil`.
    static func propertyChanged(path: ObjectPath, interface: InterfaceName, name: String, value: DBusValue?)
        throws(DBusError) -> OpaquePointer
    {
        try propertiesChanged(
            path: path, interface: interface,
            changed: { (entries: inout DBusMessageIter) throws(DBusError) in
                if let value { try appendChange(name, value, to: &entries) }
            },
            invalidated: { (names: inout DBusMessageIter) throws(DBusError) in
                if value == nil, !appendString(&names, TypeCode.string, name) { throw outOfMemory }
            })
    }

    /// The signal around the `a{sv}` and `as` its callers fill in.
    private static func propertiesChanged(
        path: ObjectPath, interface: InterfaceName, changed: (inout DBusMessageIter) throws(DBusError) -> Void,
        invalidated: (inout DBusMessageIter) throws(DBusError) -> Void
    ) throws(DBusError) -> OpaquePointer {
        let created = path.rawValue.withCString { path in
            dbus_message_new_signal(path, cString(propertiesInterface), cString(propertiesChangedMember))
        }
        guard let raw = created else { throw DBusError(.limitExceeded, message: "out of memory creating a message") }
        do throws(DBusError) {
            var iter = DBusMessageIter()
            dbus_message_iter_init_append(raw, &iter)
            guard appendString(&iter, TypeCode.string, interface.rawValue) else { throw outOfMemory }
            let changedOK = try withContainer(&iter, TypeCode.array, "{sv}", changed)
            let invalidatedOK = try withContainer(&iter, TypeCode.array, "s", invalidated)
            guard changedOK, invalidatedOK else { throw outOfMemory }
        } catch {
            dbus_message_unref(raw)
            throw error
        }
        return raw
    }

    /// One `{sv}` entry of a `PropertiesChanged`.
    private static func appendChange(_ name: String, _ value: DBusValue, to entries: inout DBusMessageIter)
        throws(DBusError)
    {
        let entryOK = try withContainer(&entries, TypeCode.dictEntry, nil) {
            (pair: inout DBusMessageIter) throws(DBusError) in
            guard appendString(&pair, TypeCode.string, name) else { throw outOfMemory }
            let variantOK = try withContainer(&pair, TypeCode.variant, value.signatureCode) {
                (inner: inout DBusMessageIter) throws(DBusError) in
                try append(value, to: &inner)
            }
            if !variantOK { throw outOfMemory }
        }
        if !entryOK { throw outOfMemory }
    }

    private static let propertiesInterface: StaticString = "org.freedesktop.DBus.Properties"
    private static let propertiesChangedMember: StaticString = "PropertiesChanged"

    /// A literal's own NUL-terminated bytes: a `String` passed to C would be copied each time.
    private static func cString(_ literal: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(literal.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    private static let localName = (path: "/org/freedesktop/DBus/Local", interface: "org.freedesktop.DBus.Local")

    private static func makeHeader(_ message: DBusMessage) throws(DBusError) -> OpaquePointer? {
        switch message.kind {
        case .methodCall:
            guard let path = message.path, let member = message.member else {
                throw DBusError(.invalidValue, message: "a method call needs a path and a member")
            }
            return withOptionalCString(message.destination?.rawValue) { destination in
                withOptionalCString(message.interface?.rawValue) { interface in
                    path.rawValue.withCString { path in
                        member.rawValue.withCString { dbus_message_new_method_call(destination, path, interface, $0) }
                    }
                }
            }
        case .signal:
            guard let path = message.path, let interface = message.interface, let member = message.member else {
                throw DBusError(.invalidValue, message: "a signal needs a path, an interface and a member")
            }
            let raw = path.rawValue.withCString { path in
                interface.rawValue.withCString { interface in
                    member.rawValue.withCString { dbus_message_new_signal(path, interface, $0) }
                }
            }
            // A signal with a destination is unicast; without this it would reach everyone.
            if let raw, let destination = message.destination {
                destination.rawValue.withCString { _ = dbus_message_set_destination(raw, $0) }
            }
            return raw
        case .methodReturn:
            guard let raw = dbus_message_new(MessageTypeCode.methodReturn) else { return nil }
            return try setReplyFields(raw, message)
        case .error:
            let name = message.errorName ?? DBusError.StandardName.failed
            guard (try? ErrorName(name)) != nil else {
                throw DBusError(.invalidName, message: "invalid error name \(name)")
            }
            guard let raw = dbus_message_new(MessageTypeCode.error) else { return nil }
            dbus_message_set_error_name(raw, name)
            return try setReplyFields(raw, message)
        }
    }

    private static func setReplyFields(_ raw: OpaquePointer, _ message: DBusMessage) throws(DBusError) -> OpaquePointer
    {
        dbus_message_set_reply_serial(raw, message.replySerial)
        if let destination = message.destination {
            destination.rawValue.withCString { _ = dbus_message_set_destination(raw, $0) }
        }
        dbus_message_set_no_reply(raw, 1)
        return raw
    }

    static func appendBody(_ body: [DBusValue], to raw: OpaquePointer) throws(DBusError) {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(raw, &iter)
        for value in body { try append(value, to: &iter) }
    }

    private static func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws(DBusError) {
        let ok: Bool
        switch value {
        case .byte(let v): ok = appendBasic(&iter, TypeCode.byte, v)
        case .boolean(let v): ok = appendBasic(&iter, TypeCode.boolean, dbus_bool_t(v ? 1 : 0))
        case .int16(let v): ok = appendBasic(&iter, TypeCode.int16, v)
        case .uint16(let v): ok = appendBasic(&iter, TypeCode.uint16, v)
        case .int32(let v): ok = appendBasic(&iter, TypeCode.int32, v)
        case .uint32(let v): ok = appendBasic(&iter, TypeCode.uint32, v)
        case .int64(let v): ok = appendBasic(&iter, TypeCode.int64, v)
        case .uint64(let v): ok = appendBasic(&iter, TypeCode.uint64, v)
        case .double(let v): ok = appendBasic(&iter, TypeCode.double, v)
        case .unixFD(let fd):
            let number = fd.rawValue
            guard number >= 0 else { throw DBusError(.invalidValue, message: "file descriptor already closed") }
            ok = appendBasic(&iter, TypeCode.unixFD, number)
        case .string(let s): ok = appendString(&iter, TypeCode.string, s)
        case .objectPath(let p): ok = appendString(&iter, TypeCode.objectPath, p.rawValue)
        case .signature(let g): ok = appendString(&iter, TypeCode.signature, g.rawValue)
        case .bytes(let data):
            ok = try withContainer(&iter, TypeCode.array, "y") { (sub: inout DBusMessageIter) throws(DBusError) in
                let appended = data.withUnsafeBytes { buffer -> Bool in
                    var base = buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1)
                    return withUnsafeMutablePointer(to: &base) {
                        dbus_message_iter_append_fixed_array(&sub, TypeCode.byte, $0, Int32(buffer.count)) != 0
                    }
                }
                if !appended { throw outOfMemory }
            }
        case .array(let element, let elements):
            ok = try withContainer(&iter, TypeCode.array, element.signature) {
                (sub: inout DBusMessageIter) throws(DBusError) in
                for element in elements { try append(element, to: &sub) }
            }
        case .dictionary(let key, let valueType, let entries):
            // Property and option dicts, the most common by far, need no spelling out.
            let entrySignature: String
            if key == .string && valueType == .variant {
                entrySignature = "{sv}"
            } else {
                var spelt = "{"
                key.appendSignature(to: &spelt)
                valueType.appendSignature(to: &spelt)
                spelt.append("}")
                entrySignature = spelt
            }
            ok = try withContainer(&iter, TypeCode.array, entrySignature) {
                (sub: inout DBusMessageIter) throws(DBusError) in
                for entry in entries {
                    let entryOK = try withContainer(&sub, TypeCode.dictEntry, nil) {
                        (pair: inout DBusMessageIter) throws(DBusError) in
                        try append(entry.key, to: &pair)
                        try append(entry.value, to: &pair)
                    }
                    if !entryOK { throw outOfMemory }
                }
            }
        case .structure(let fields):
            ok = try withContainer(&iter, TypeCode.structure, nil) { (sub: inout DBusMessageIter) throws(DBusError) in
                for field in fields { try append(field, to: &sub) }
            }
        case .variant(let inner):
            ok = try withContainer(&iter, TypeCode.variant, inner.signatureCode) {
                (sub: inout DBusMessageIter) throws(DBusError) in
                try append(inner, to: &sub)
            }
        }
        if !ok { throw outOfMemory }
    }

    private static var outOfMemory: DBusError { DBusError(.limitExceeded, message: "out of memory appending a value") }

    /// Passing a `String` straight to a C parameter copies it to the heap on every call;
    /// `withCString` lends the string's own NUL-terminated storage instead.
    private static func withOptionalCString<Result>(
        _ string: String?, _ body: (UnsafePointer<CChar>?) -> Result
    ) -> Result {
        guard let string else { return body(nil) }
        return string.withCString(body)
    }

    private static func appendBasic<T>(_ iter: inout DBusMessageIter, _ code: Int32, _ value: T) -> Bool {
        var copy = value
        return withUnsafeMutablePointer(to: &copy) { dbus_message_iter_append_basic(&iter, code, $0) != 0 }
    }

    private static func appendString(_ iter: inout DBusMessageIter, _ code: Int32, _ string: String) -> Bool {
        string.withCString { cString in
            var pointer: UnsafePointer<CChar>? = cString
            return withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_append_basic(&iter, code, $0) != 0 }
        }
    }

    private static func withContainer(
        _ iter: inout DBusMessageIter, _ code: Int32, _ signature: String?,
        _ body: (inout DBusMessageIter) throws(DBusError) -> Void
    ) throws(DBusError) -> Bool {
        var sub = DBusMessageIter()
        let opened: Bool
        if let signature {
            opened = signature.withCString { dbus_message_iter_open_container(&iter, code, $0, &sub) != 0 }
        } else {
            opened = dbus_message_iter_open_container(&iter, code, nil, &sub) != 0
        }
        guard opened else { return false }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        return dbus_message_iter_close_container(&iter, &sub) != 0
    }
}
