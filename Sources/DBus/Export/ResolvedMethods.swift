import Glibc

/// The methods incoming calls resolved to lately, so the next call to the same method skips
/// the object table's three hashed lookups: a GATT server or a simulated bluetoothd answers
/// the same few methods over and over. Kept in the ``ObjectTable`` under its lock, and emptied
/// by the table whenever its objects, interfaces or methods change, so an unexported handler is
/// never referenced from here alone.
struct ResolvedMethods {
    /// Few enough that a linear scan of string comparisons beats hashing the path.
    static let capacity = 8

    private var entries: [ResolvedCall] = []
    private var next = 0

    /// Forgets every resolution.
    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        next = 0
    }

    /// A call resolved lately, matched on the header fields libdbus holds, so a hit decodes no
    /// names at all: it reuses the ones the call was resolved under.
    func lookup(
        path: UnsafePointer<CChar>, interface: UnsafePointer<CChar>?, member: UnsafePointer<CChar>,
        signature: UnsafePointer<CChar>
    ) -> ResolvedCall? {
        for index in entries.indices
        where Self.same(entries[index].member.rawValue, member) && Self.same(entries[index].signature, signature)
            && Self.same(entries[index].interface?.rawValue, interface) && Self.same(entries[index].path.rawValue, path)
        {
            return entries[index]
        }
        return nil
    }

    private static func same(_ name: String?, _ field: UnsafePointer<CChar>?) -> Bool {
        guard let name, let field else { return name == nil && field == nil }
        return name.withCString { strcmp($0, field) == 0 }
    }

    /// ``IncomingCall/resolve(_:signature:in:)``, answered from the cache when it can be.
    mutating func resolve(_ call: DBusMessage, signature: String, in table: ObjectTable) -> IncomingCall {
        guard let path = call.path, let member = call.member else {
            return IncomingCall.resolve(call, signature: signature, in: table)
        }
        for index in entries.indices
        where entries[index].member == member && entries[index].signature == signature
            && entries[index].interface == call.interface && entries[index].path == path
        {
            return entries[index].resolution
        }
        let resolution = IncomingCall.resolve(call, signature: signature, in: table)
        // A property's `Set` resolves by its arguments (which property, which value), which
        // the key leaves out.
        guard resolution.isMethodInvocation, call.interface != .properties else { return resolution }
        let entry = ResolvedCall(
            path: path, interface: call.interface, member: member, signature: signature, resolution: resolution)
        if entries.count < Self.capacity {
            entries.append(entry)
        } else {
            entries[next] = entry
            next = (next + 1) % Self.capacity
        }
        return resolution
    }
}

/// One remembered resolution: the names and signature a call was resolved under, and what it
/// resolved to. A class, so a hit hands out one reference rather than a copy of every name and
/// of the handler.
final class ResolvedCall: Sendable {
    let path: ObjectPath
    let interface: InterfaceName?
    let member: MemberName
    let signature: String
    let resolution: IncomingCall
    /// The handler and reply types of a ``ExportedMethod/Handler/direct(_:)`` method open to
    /// every caller, taken out once: a hit then calls it without unpacking the resolution.
    let direct: (handler: @Sendable (borrowing ReceivedCall) -> DirectAnswer, outSignature: Signature)?

    init(path: ObjectPath, interface: InterfaceName?, member: MemberName, signature: String, resolution: IncomingCall) {
        self.path = path
        self.interface = interface
        self.member = member
        self.signature = signature
        self.resolution = resolution
        if case .invoke(let invoked) = resolution, case .direct(let handler) = invoked.method.handler {
            direct = (handler, invoked.method.outSignature)
        } else {
            direct = nil
        }
    }
}

extension IncomingCall {
    /// Only calls of exported methods are kept: every other answer either carries values read
    /// from the table (properties, introspection) or is an error not worth a slot.
    fileprivate var isMethodInvocation: Bool {
        switch self {
        case .invoke: true
        case .restricted(_, let inner): inner.isMethodInvocation
        default: false
        }
    }
}
