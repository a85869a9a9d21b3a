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
    public var kind: Kind {
        get { storage.fields.kind }
        set { uniqueStorage().fields.kind = newValue }
    }
    /// The object path (calls and signals).
    public var path: ObjectPath? {
        get { storage.fields.path }
        set { uniqueStorage().fields.path = newValue }
    }
    /// The interface (signals always; calls usually).
    public var interface: InterfaceName? {
        get { storage.fields.interface }
        set { uniqueStorage().fields.interface = newValue }
    }
    /// The method or signal name.
    public var member: MemberName? {
        get { storage.fields.member }
        set { uniqueStorage().fields.member = newValue }
    }
    /// The error name of an error reply.
    public var errorName: String? {
        get { storage.fields.errorName }
        set { uniqueStorage().fields.errorName = newValue }
    }
    /// The unique name of the sender, filled in by the bus.
    public var sender: BusName? {
        get { storage.fields.sender }
        set { uniqueStorage().fields.sender = newValue }
    }
    /// The destination, if any.
    public var destination: BusName? {
        get { storage.fields.destination }
        set { uniqueStorage().fields.destination = newValue }
    }
    /// The serial the sender gave the message.
    public var serial: UInt32 {
        get { storage.fields.serial }
        set { uniqueStorage().fields.serial = newValue }
    }
    /// For replies: the serial of the call answered.
    public var replySerial: UInt32 {
        get { storage.fields.replySerial }
        set { uniqueStorage().fields.replySerial = newValue }
    }
    /// Set on calls whose caller does not want a reply.
    public var noReplyExpected: Bool {
        get { storage.fields.noReplyExpected }
        set { uniqueStorage().fields.noReplyExpected = newValue }
    }
    /// The arguments.
    public var body: [DBusValue] {
        get { storage.fields.body }
        set { uniqueStorage().fields.body = newValue }
    }

    /// The fields, shared by copies until one is changed (copy on write). A message passes
    /// through several hands per call (the loop, the pending call, the waiting caller): copying
    /// a struct of seven strings and an array retained each of them, an atomic operation apiece,
    /// where a shared box is retained once.
    private var storage: Storage

    /// Creates a message from its parts.
    public init(
        kind: Kind, path: ObjectPath? = nil, interface: InterfaceName? = nil, member: MemberName? = nil,
        errorName: String? = nil, sender: BusName? = nil, destination: BusName? = nil, serial: UInt32 = 0,
        replySerial: UInt32 = 0, noReplyExpected: Bool = false, body: [DBusValue] = []
    ) {
        storage = Storage(
            kind: kind, path: path, interface: interface, member: member, errorName: errorName, sender: sender,
            destination: destination, serial: serial, replySerial: replySerial, noReplyExpected: noReplyExpected,
            body: body)
    }

    /// The storage, copied first when another message shares it.
    private mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
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

extension DBusMessage {
    /// Two messages are equal when all their fields are.
    public static func == (lhs: DBusMessage, rhs: DBusMessage) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields
    }

    /// Hashes all fields.
    public func hash(into hasher: inout Hasher) { hasher.combine(storage.fields) }
}

extension DBusMessage {
    /// A message's fields in a box of their own.
    ///
    /// `@unchecked Sendable`, with the discipline of the standard library's own copy-on-write
    /// buffers: a box is written only through ``DBusMessage/uniqueStorage()``, right after
    /// `isKnownUniquelyReferenced` proved that the one `var` being mutated holds the only
    /// reference. Another thread could reach the box only through a copy of that message, which
    /// would be a second reference; so a box any other thread can see is never written, and a
    /// shared one is copied first. The fields stay `var` so that decoding a message (header,
    /// then body) and routing it fill one box in place, with no allocation per field.
    fileprivate final class Storage: @unchecked Sendable {
        var fields: Fields

        init(
            kind: Kind, path: ObjectPath?, interface: InterfaceName?, member: MemberName?, errorName: String?,
            sender: BusName?, destination: BusName?, serial: UInt32, replySerial: UInt32, noReplyExpected: Bool,
            body: [DBusValue]
        ) {
            fields = Fields(
                kind: kind, path: path, interface: interface, member: member, errorName: errorName, sender: sender,
                destination: destination, serial: serial, replySerial: replySerial,
                noReplyExpected: noReplyExpected, body: body)
        }

        private init(fields: Fields) { self.fields = fields }

        func copy() -> Storage { Storage(fields: fields) }
    }

    /// The fields themselves, compared and hashed as a whole.
    fileprivate struct Fields: Hashable {
        var kind: Kind
        var path: ObjectPath?
        var interface: InterfaceName?
        var member: MemberName?
        var errorName: String?
        var sender: BusName?
        var destination: BusName?
        var serial: UInt32
        var replySerial: UInt32
        var noReplyExpected: Bool
        var body: [DBusValue]
    }
}
