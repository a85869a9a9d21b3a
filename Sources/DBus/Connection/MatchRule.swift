import Foundation

/// A D-Bus match rule for signals, used both to ask the bus for signals (`AddMatch`) and to
/// route received signals to subscribers on this side.
///
/// Routing re-checks every field locally because the bus delivers a message once for all
/// rules of a connection: a signal that matched someone else's broader rule must not reach a
/// subscription whose rule it does not match.
public struct MatchRule: Sendable, Hashable, CustomStringConvertible {
    /// Only signals from this sender. A unique name is compared directly; a well-known name is
    /// resolved to its current owner, which the connection follows through `NameOwnerChanged`.
    public var sender: BusName?
    /// Only signals from exactly this object.
    public var path: ObjectPath?
    /// Only signals from this object or its descendants.
    public var pathNamespace: ObjectPath?
    /// Only signals of this interface.
    public var interface: InterfaceName?
    /// Only signals of this name.
    public var member: MemberName?
    /// Only signals whose argument N is a string equal to the given text (as the bus matches
    /// `argN`: an object path argument never matches).
    public var arguments: [Int: String]

    /// Creates a rule; `nil` fields match anything.
    public init(
        sender: BusName? = nil, path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil,
        interface: InterfaceName? = nil, member: MemberName? = nil, arguments: [Int: String] = [:]
    ) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }

    /// The rule in the bus's text syntax, e.g. `type='signal',interface='org.bluez.Device1'`.
    public var description: String {
        var parts = ["type='signal'"]
        if let sender { parts.append("sender='\(sender.rawValue)'") }
        if let path { parts.append("path='\(path.rawValue)'") }
        if let pathNamespace, pathNamespace != .root {
            parts.append("path_namespace='\(pathNamespace.rawValue)'")
        }
        if let interface { parts.append("interface='\(interface.rawValue)'") }
        if let member { parts.append("member='\(member.rawValue)'") }
        for index in arguments.keys.sorted() {
            parts.append("arg\(index)='\(Self.escape(arguments[index] ?? ""))'")
        }
        return parts.joined(separator: ",")
    }

    /// Checks a rule the bus would refuse before sending it.
    func validate() throws(DBusError) {
        if path != nil, pathNamespace != nil {
            throw DBusError(.invalidValue, message: "a match rule cannot have both path and path_namespace")
        }
        for (index, text) in arguments {
            guard (0...63).contains(index) else {
                throw DBusError(.invalidValue, message: "match rule argument index \(index) is not in 0...63")
            }
            if text.utf8.contains(0) { throw DBusError(.invalidValue, message: "match rule argument contains NUL") }
        }
    }

    /// Whether the header fields (not the arguments, not the sender) match.
    func matchesHeader(_ message: DBusMessage) -> Bool {
        guard message.kind == .signal else { return false }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let path, message.path != path { return false }
        if let pathNamespace {
            guard let messagePath = message.path, messagePath.isInNamespace(pathNamespace) else { return false }
        }
        return true
    }

    /// Whether `message` matches every field but the sender, which needs owner tracking.
    func matchesIgnoringSender(_ message: DBusMessage) -> Bool {
        guard matchesHeader(message) else { return false }
        for (index, expected) in arguments {
            guard index < message.body.count else { return false }
            // Strings only, as the bus does: matching object paths too would deliver a signal
            // only when some broader rule of this connection made the bus send it.
            guard case .string(let text) = message.body[index], text == expected else { return false }
        }
        return true
    }

    /// Quoting per the specification: a quote cannot be escaped inside quotes, so it is closed,
    /// escaped, and reopened.
    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "'", with: "'\\''")
    }
}
