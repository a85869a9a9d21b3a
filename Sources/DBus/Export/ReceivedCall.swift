import CDBus

/// A call as a ``ExportedMethod/Handler/direct(_:)`` handler sees it: read off the received
/// message on demand, so a handler that needs little of it decodes little.
///
/// Noncopyable and handed over `borrowing`, so a handler cannot keep it past its return or
/// capture it in a closure that runs later; what it needs later it takes out first
/// (``arguments()``, ``message``), and a late answer goes through ``answerLater()``.
public struct ReceivedCall: ~Copyable {
    /// The received message, valid for this turn of the I/O loop only; `nil` when the call was
    /// decoded and answered on a later turn (after an authorization check).
    private let raw: OpaquePointer?
    private let decoded: DBusMessage?
    private let outSignature: Signature?
    private let core: ConnectionCore
    /// The object path the call was addressed to.
    public let path: ObjectPath

    init(raw: OpaquePointer, path: ObjectPath, outSignature: Signature?, core: ConnectionCore) {
        self.raw = raw
        self.decoded = nil
        self.path = path
        self.outSignature = outSignature
        self.core = core
    }

    init(decoded: DBusMessage, received raw: OpaquePointer?, outSignature: Signature?, core: ConnectionCore) {
        self.raw = raw
        self.decoded = decoded
        self.path = decoded.path ?? .root
        self.outSignature = outSignature
        self.core = core
    }

    /// The call's arguments, decoded.
    public func arguments() throws(DBusError) -> [DBusValue] {
        if let decoded { return decoded.body }
        guard let raw else { return [] }
        return try MessageDecoder.decodeBody(raw)
    }

    /// Whether the first argument is an empty array or dictionary (an options dictionary with
    /// nothing in it, the usual case), found without decoding anything.
    public var firstArgumentIsEmpty: Bool {
        if let decoded {
            switch decoded.body.first {
            case .array(_, let elements)?: return elements.isEmpty
            case .dictionary(_, _, let entries)?: return entries.isEmpty
            default: return false
            }
        }
        guard let raw else { return false }
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0, dbus_message_iter_get_arg_type(&iter) == TypeCode.array
        else { return false }
        return dbus_message_iter_get_element_count(&iter) == 0
    }

    /// The whole call, decoded.
    public var message: DBusMessage {
        get throws(DBusError) {
            if let decoded { return decoded }
            guard let raw else { throw DBusError(.invalidValue, message: "the call is no longer at hand") }
            return try MessageDecoder.decode(raw)
        }
    }

    /// A reply to answer through later, from any thread; return it as
    /// ``DirectAnswer/later(_:)``.
    public func answerLater() -> MethodReply {
        if let decoded {
            return MethodReply(call: decoded, received: raw, outSignature: outSignature, core: core)
        }
        // `init(raw:…)` is the only other way in, so the message is at hand.
        return MethodReply(received: raw.unsafelyUnwrapped, outSignature: outSignature, core: core)
    }
}

/// What a ``ExportedMethod/Handler/direct(_:)`` handler answers with.
public enum DirectAnswer: Sendable {
    /// A method return carrying this one value (no array to allocate), sent as soon as the
    /// handler returns, after the signals it emitted.
    case value(DBusValue)
    /// A method return carrying these values, sent as soon as the handler returns, after the
    /// signals it emitted.
    case values([DBusValue])
    /// An error reply; see ``ExportedMethod/Handler`` for how errors are named.
    case error(DBusError)
    /// The answer comes later, through this reply (from ``ReceivedCall/answerLater()``).
    case later(MethodReply)
}
