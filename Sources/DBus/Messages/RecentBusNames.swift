import Glibc

/// The sender and destination of the last message decoded, reused while the next one has the
/// same: a server mostly hears from one client at its one name, a client's replies come from
/// the service it calls to its one name, and a comparison costs less than a new string (a
/// scan, a validation, often an allocation).
struct RecentBusNames {
    private var lastSender: BusName?
    private var lastDestination: BusName?

    /// The name `field` spells, from the last sender when it is the same.
    mutating func sender(_ field: UnsafePointer<CChar>) -> BusName {
        Self.reuse(&lastSender, field)
    }

    /// The name `field` spells, from the last destination when it is the same.
    mutating func destination(_ field: UnsafePointer<CChar>) -> BusName {
        Self.reuse(&lastDestination, field)
    }

    private static func reuse(_ last: inout BusName?, _ field: UnsafePointer<CChar>) -> BusName {
        if let name = last, name.rawValue.withCString({ strcmp($0, field) == 0 }) { return name }
        let name = BusName(unchecked: String(cString: field))
        last = name
        return name
    }
}
