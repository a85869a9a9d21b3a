extension Connection {
    /// How ``requestName(_:flags:)`` went.
    public enum RequestNameReply: UInt32, Sendable {
        /// This connection now owns the name.
        case primaryOwner = 1
        /// Queued behind the current owner.
        case inQueue = 2
        /// Someone else owns it and we asked not to queue.
        case exists = 3
        /// This connection already owned it.
        case alreadyOwner = 4
    }

    /// Flags of `RequestName`.
    public struct RequestNameFlags: OptionSet, Sendable {
        /// The raw value.
        public let rawValue: UInt32
        /// Creates flags from their bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Let a later requester with ``replaceExisting`` take the name.
        public static let allowReplacement = RequestNameFlags(rawValue: 1)
        /// Take the name from an owner that allowed replacement.
        public static let replaceExisting = RequestNameFlags(rawValue: 2)
        /// Fail instead of queueing.
        public static let doNotQueue = RequestNameFlags(rawValue: 4)
    }

    /// Asks the bus for a well-known name.
    @discardableResult
    public func requestName(
        _ name: BusName, flags: RequestNameFlags = [.doNotQueue]
    ) async throws(DBusError) -> RequestNameReply {
        let reply = try await callBus("RequestName", [.string(name.rawValue), .uint32(flags.rawValue)])
        let code: UInt32 = try reply.argument(0)
        guard let result = RequestNameReply(rawValue: code) else {
            throw DBusError(.typeMismatch, message: "RequestName replied \(code)")
        }
        return result
    }

    /// Gives a well-known name back; throws ``DBusError/Code/nameNotOwned`` if we did not own it.
    public func releaseName(_ name: BusName) async throws(DBusError) {
        let reply = try await callBus("ReleaseName", [.string(name.rawValue)])
        let code: UInt32 = try reply.argument(0)
        if code != 1 { throw DBusError(.nameNotOwned, message: "\(name) was not owned by this connection") }
    }

    /// The unique name owning `name`, or `nil` when nobody does.
    public func nameOwner(of name: BusName) async throws(DBusError) -> BusName? {
        do {
            let reply = try await callBus("GetNameOwner", [.string(name.rawValue)])
            return try BusName(try reply.argument(0, as: String.self))
        } catch  where error.name == DBusError.StandardName.nameHasNoOwner {
            return nil
        }
    }

    /// The names currently on the bus.
    public func listNames() async throws(DBusError) -> [String] {
        try await callBus("ListNames", []).argument(0)
    }

    private func callBus(_ member: String, _ arguments: [DBusValue]) async throws(DBusError) -> DBusMessage {
        try await call(
            destination: .bus, path: ObjectPath(unchecked: "/org/freedesktop/DBus"), interface: .bus,
            member: MemberName(unchecked: member), arguments: arguments)
    }
}
