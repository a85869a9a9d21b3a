import DBus

/// A GATT service of a peripheral: a snapshot taken at discovery.
public struct Service: Sendable, Hashable, Identifiable {
    /// The service UUID.
    public var uuid: BluetoothUUID
    /// Primary or secondary.
    public var isPrimary: Bool
    /// The start handle (from `Handle`, or BlueZ's object path on 5.66).
    public var handle: UInt16?
    /// The services it includes (Core Bluetooth's `includedServices`), each with its own
    /// characteristics and included services. An include that would lead back to a service
    /// that includes it (a loop, which a well-formed peripheral never has) is listed without
    /// its own included services.
    public var includedServices: [Service]
    /// Its characteristics.
    public var characteristics: [Characteristic]
    let path: ObjectPath

    /// Stable within a connection: the BlueZ object path.
    public var id: String { path.rawValue }

    /// Whether the two are the same.
    public static func == (lhs: Service, rhs: Service) -> Bool { lhs.path == rhs.path }
    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(path) }
}

/// A descriptor of a characteristic: a snapshot taken at discovery.
public struct Descriptor: Sendable, Hashable, Identifiable {
    /// The descriptor UUID, e.g. `2901` (user description).
    public var uuid: BluetoothUUID
    /// Its handle, when known.
    public var handle: UInt16?
    let path: ObjectPath

    /// Stable within a connection: the BlueZ object path.
    public var id: String { path.rawValue }
}
