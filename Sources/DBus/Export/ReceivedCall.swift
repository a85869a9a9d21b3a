import CDBus

/// A call as a ``ExportedMethod/Handler/direct(_:)`` handler sees it: read off the received
/// message on demand, so a handler that needs little of it decodes little.
///
/// Noncopyable and handed over `borrowing`, so a handler cannot keep it past its return or
/// capture it in a closure that runs later; what it needs later it takes out first
/// (``arguments()``, ``message``), and a late answer goes through ``answerLater()``.
public struct ReceivedCall: ~Copyable {
    /// Where the call is read from.
    private enum Source {
        /// Only as libdbus received it, valid for this turn of the I/O loop.
        case received(OpaquePointer)
        /// Decoded already; `received` is `nil` when the call is answered on a later turn
        /// (after an authorization check), when libdbus's message is gone.
        case decoded(DBusMessage, received: OpaquePointer?)
    }

    private let source: Source
    private let outSignature: Signature?
    private let core: ConnectionCore
    /// The object path the call was addressed to.
    public let path: ObjectPath

    init(raw: OpaquePointer, path: ObjectPath, outSignature: Signature?, core: ConnectionCore) {
        self.source = .received(raw)
        self.path = path
        self.outSignature = outSignature
        self.core = core
    }

    init(decoded: DBusMessage, received raw: OpaquePointer?, outSignature: Signature?, core: ConnectionCore) {
        self.source = .decoded(decoded, received: raw)
        self.path = decoded.path ?? .root
        self.outSignature = outSignature
        self.core = core
    }

    /// The call's arguments, decoded.
    public func arguments() throws(DBusError) -> [DBusValue] {
        switch source {
        case .received(let raw): try MessageDecoder.decodeBody(raw)
        case .decoded(let call, _): call.body
        }
    }

    /// Whether the first argument is an empty array or dictionary (an options dictionary with
    /// nothing in it, the usual case), found without decoding anything.
    public var firstArgumentIsEmpty: Bool {
        switch source {
        case .received(let raw):
            var iter = DBusMessageIter()
            guard dbus_message_iter_init(raw, &iter) != 0, dbus_message_iter_get_arg_type(&iter) == TypeCode.array
            else { return false }
            return dbus_message_iter_get_element_count(&iter) == 0
        case .decoded(let call, _):
            switch call.body.first {
            case .array(_, let elements)?: return elements.isEmpty
            case .dictionary(_, _, let entries)?: return entries.isEmpty
            default: return false
            }
        }
    }

    /// The whole call, decoded.
    public var message: DBusMessage {
        get throws(DBusError) {
            switch source {
            case .received(let raw): try MessageDecoder.decode(raw)
            case .decoded(let call, _): call
            }
        }
    }

    /// A reply to answer through later, from any thread; return it as
    /// ``DirectAnswer/later(_:)``.
    public func answerLater() -> MethodReply {
        switch source {
        case .received(let raw): MethodReply(received: raw, outSignature: outSignature, core: core)
        case .decoded(let call, let raw): MethodReply(call: call, received: raw, outSignature: outSignature, core: core)
        }
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
