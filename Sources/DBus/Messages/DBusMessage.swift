/// A D-Bus message as a Sendable value: header fields and a decoded body.
///
/// Messages received from the bus are decoded once, on the connection's I/O thread; messages
/// to send are built by the ``Connection`` from their parts.
public struct DBusMessage: Sendable, Hashable {
    /// The four kinds of D-Bus message.
    public enum Kind: Sendable, Hashable {
        /// A method call.
        case methodCall
        /// A successful reply.
        case methodReturn
        /// An error reply; ``DBusMessage/errorName`` names it.
        case error
        /// A signal.
        case signal
    }

    /// The kind of message.
    public var kind: Kind
    /// The object path (calls and signals).
    public var path: ObjectPath?
    /// The interface (signals always; calls usually).
    public var interface: InterfaceName?
    /// The method or signal name.
    public var member: MemberName?
    /// The error name of an error reply.
    public var errorName: String?
    /// The unique name of the sender, filled in by the bus.
    public var sender: BusName?
    /// The destination, if any.
    public var destination: BusName?
    /// The serial the sender gave the message.
    public var serial: UInt32
    /// For replies: the serial of the call answered.
    public var replySerial: UInt32
    /// Set on calls whose caller does not want a reply.
    public var noReplyExpected: Bool
    /// The arguments.
    public var body: [DBusValue]

    /// Creates a message from its parts.
    public init(
        kind: Kind, path: ObjectPath? = nil, interface: InterfaceName? = nil, member: MemberName? = nil,
        errorName: String? = nil, sender: BusName? = nil, destination: BusName? = nil, serial: UInt32 = 0,
        replySerial: UInt32 = 0, noReplyExpected: Bool = false, body: [DBusValue] = []
    ) {
        self.kind = kind
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.sender = sender
        self.destination = destination
        self.serial = serial
        self.replySerial = replySerial
        self.noReplyExpected = noReplyExpected
        self.body = body
    }

    /// The body's signature, e.g. `sa{sv}as`.
    public var signature: String {
        var out = ""
        for value in body { value.appendSignature(to: &out) }
        return out
    }

    /// The body argument at `index`, decoded as `T`.
    public func argument<T: DBusRepresentable>(_ index: Int, as type: T.Type = T.self) throws(DBusError) -> T {
        guard body.indices.contains(index) else {
            throw DBusError(.typeMismatch, message: "message has \(body.count) arguments, wanted #\(index)")
        }
        return try T(dbusValue: body[index])
    }

    /// For error replies: the error this message carries (its name and first string argument).
    public var error: DBusError? {
        guard kind == .error else { return nil }
        var text = ""
        if case .string(let message)? = body.first { text = message }
        return DBusError(.remote, name: errorName ?? DBusError.StandardName.failed, message: text)
    }
}
