/// One interface of an exported object: its methods, properties and signals.
///
/// Properties are stored by the connection; read them back with
/// ``Connection/property(_:interface:path:)`` and change them with
/// ``Connection/setProperties(_:interface:path:)``, which also emits `PropertiesChanged`.
public struct ExportedInterface: Sendable {
    /// The interface name.
    public var name: InterfaceName
    /// Methods by name.
    public var methods: [MemberName: ExportedMethod]
    /// Properties by name, with their initial values.
    public var properties: [String: ExportedProperty]
    /// Signals the object may emit, for introspection.
    public var signals: [SignalDescription]
    /// Who may call its methods and set its properties: a unique name, or a well-known name
    /// whose current owner alone may (e.g. `org.bluez` for a GATT application or an agent).
    /// Other callers get `org.freedesktop.DBus.Error.AccessDenied`; nil accepts everyone.
    /// Reading properties stays open to all.
    public var acceptedSender: BusName?

    /// Creates an interface description.
    public init(
        _ name: InterfaceName, methods: [ExportedMethod] = [], properties: [ExportedProperty] = [],
        signals: [SignalDescription] = [], acceptedSender: BusName? = nil
    ) {
        self.name = name
        self.acceptedSender = acceptedSender
        self.methods = Dictionary(methods.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        self.properties = Dictionary(properties.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        self.signals = signals
    }
}

/// An exported method: its signatures and the code that answers it.
public struct ExportedMethod: Sendable {
    /// Code that answers a call: the returned values form the reply; a thrown ``DBusError``
    /// with code ``DBusError/Code/remote`` becomes an error reply of its name (see
    /// ``DBusError/reply(_:_:)``); any other error becomes `org.freedesktop.DBus.Error.Failed`.
    public enum Handler: Sendable {
        /// Runs on its own task; may take as long as it needs.
        case async(@Sendable (DBusMessage) async throws -> [DBusValue])
        /// Runs on the connection's I/O thread without a task hop: it must be quick and must
        /// not wait for anything (no locks held elsewhere, no calls over the bus).
        case immediate(@Sendable (DBusMessage) throws -> [DBusValue])
        /// Runs on the I/O thread like ``immediate(_:)`` but answers later, from any thread,
        /// through the ``MethodReply`` it is given (exactly once; a reply dropped unanswered
        /// sends `org.freedesktop.DBus.Error.NoReply` so the caller is not left waiting).
        case deferred(@Sendable (DBusMessage, MethodReply) -> Void)
        /// Runs on the I/O thread like ``immediate(_:)``, on the call as received rather than
        /// decoded (see ``ReceivedCall``), and returns its answer, or a ``MethodReply`` to
        /// answer through later: for the hottest methods, whose common case needs little of
        /// the call and answers at once.
        case direct(@Sendable (borrowing ReceivedCall) -> DirectAnswer)
    }

    /// The method name.
    public var name: MemberName
    /// The argument types; calls with other types get `InvalidArgs`.
    public var inSignature: Signature
    /// The reply types; a handler returning others gets `Failed` sent instead.
    public var outSignature: Signature
    /// The code that answers.
    public var handler: Handler

    /// A method answered on its own task.
    public init(
        _ name: MemberName, in inSignature: Signature = .empty, out outSignature: Signature = .empty,
        handler: @escaping @Sendable (DBusMessage) async throws -> [DBusValue]
    ) {
        self.name = name
        self.inSignature = inSignature
        self.outSignature = outSignature
        self.handler = .async(handler)
    }

    /// A method answered on the I/O thread (see ``Handler/immediate(_:)``).
    public static func immediate(
        _ name: MemberName, in inSignature: Signature = .empty, out outSignature: Signature = .empty,
        handler: @escaping @Sendable (DBusMessage) throws -> [DBusValue]
    ) -> ExportedMethod {
        var method = ExportedMethod(name, in: inSignature, out: outSignature) { _ in [] }
        method.handler = .immediate(handler)
        return method
    }

    /// A method that answers later through a ``MethodReply`` (see ``Handler/deferred(_:)``).
    public static func deferred(
        _ name: MemberName, in inSignature: Signature = .empty, out outSignature: Signature = .empty,
        handler: @escaping @Sendable (DBusMessage, MethodReply) -> Void
    ) -> ExportedMethod {
        var method = ExportedMethod(name, in: inSignature, out: outSignature) { _ in [] }
        method.handler = .deferred(handler)
        return method
    }

    /// A method answered from the call as received (see ``Handler/direct(_:)``).
    public static func direct(
        _ name: MemberName, in inSignature: Signature = .empty, out outSignature: Signature = .empty,
        handler: @escaping @Sendable (borrowing ReceivedCall) -> DirectAnswer
    ) -> ExportedMethod {
        var method = ExportedMethod(name, in: inSignature, out: outSignature) { _ in [] }
        method.handler = .direct(handler)
        return method
    }
}

/// An exported property and how changes to it are announced.
public struct ExportedProperty: Sendable {
    /// Who may read and write it over the bus.
    public enum Access: String, Sendable {
        /// Readable only.
        case read
        /// Writable only.
        case write
        /// Readable and writable.
        case readwrite
    }

    /// The `org.freedesktop.DBus.Property.EmitsChangedSignal` annotation.
    public enum ChangeSignal: String, Sendable {
        /// `PropertiesChanged` carries the new value.
        case emitsValue = "true"
        /// `PropertiesChanged` lists the name as invalidated, without the value.
        case invalidates
        /// The value never changes.
        case constant = "const"
        /// Changes are not announced.
        case none = "false"
    }

    /// The property name.
    public var name: String
    /// The current value (while ``isPresent``); its type is ``type``.
    public var value: DBusValue
    /// The property's D-Bus type, fixed for good.
    public let type: DBusType
    /// Optional properties can be absent: left out of `GetAll` and object-manager listings,
    /// refused by `Get`, and announced as invalidated when they go (BlueZ's `RSSI`, `TxPower`…).
    public var isPresent: Bool
    /// Read/write access over the bus.
    public var access: Access
    /// How changes are announced.
    public var changeSignal: ChangeSignal
    /// Called for a `Set` from the bus before the value is stored; throwing refuses the write.
    /// The connection then stores the value, announces it, and replies, in that order.
    public var onSet: (@Sendable (DBusValue, DBusMessage) async throws -> Void)?
    /// Answers a `Set` from the bus in place of ``onSet`` and the connection's store: called
    /// on the I/O thread (quick, as ``ExportedMethod/Handler/deferred(_:)``) with a value of
    /// the property's type, it replies through the ``MethodReply`` once the change is done and
    /// stores the value itself (``Connection/updateProperties(_:removing:interface:path:)``),
    /// so that a server can reply before it announces the change, or announce it in one
    /// `PropertiesChanged` with the changes it causes.
    public var deferredSet: (@Sendable (DBusValue, MethodReply) -> Void)?

    /// Creates a property.
    public init(
        _ name: String, value: DBusValue, access: Access = .read, changeSignal: ChangeSignal = .emitsValue,
        onSet: (@Sendable (DBusValue, DBusMessage) async throws -> Void)? = nil,
        deferredSet: (@Sendable (DBusValue, MethodReply) -> Void)? = nil
    ) {
        self.name = name
        self.value = value
        self.type = value.type
        self.isPresent = true
        self.access = access
        self.changeSignal = changeSignal
        self.onSet = onSet
        self.deferredSet = deferredSet
    }

    /// Creates an optional property that is absent for now; it appears when first set.
    public init(
        _ name: String, absentOf type: DBusType, access: Access = .read, changeSignal: ChangeSignal = .emitsValue,
        onSet: (@Sendable (DBusValue, DBusMessage) async throws -> Void)? = nil
    ) {
        self.init(name, value: .boolean(false), access: access, changeSignal: changeSignal, onSet: onSet)
        self = ExportedProperty(copying: self, type: type)
    }

    private init(copying other: ExportedProperty, type: DBusType) {
        name = other.name
        value = other.value
        self.type = type
        isPresent = false
        access = other.access
        changeSignal = other.changeSignal
        onSet = other.onSet
        deferredSet = other.deferredSet
    }
}

/// A signal an interface declares, for introspection.
public struct SignalDescription: Sendable {
    /// The signal name.
    public var name: MemberName
    /// Its argument types.
    public var signature: Signature

    /// Creates a description.
    public init(_ name: MemberName, signature: Signature = .empty) {
        self.name = name
        self.signature = signature
    }
}
