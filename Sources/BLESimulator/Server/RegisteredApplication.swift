import DBus

/// A GATT application registered with `GattManager1.RegisterApplication`, as bluetoothd
/// holds it in its local database: a snapshot taken by ``Simulator/registeredApplications``.
public struct RegisteredApplication: Sendable, Hashable {
    /// The adapter index (`hciN`) it was registered on.
    public var adapter: Int
    /// The unique bus name of the application's connection.
    public var owner: BusName
    /// The application's root path (its object manager).
    public var path: ObjectPath
    /// Its services, in handle order.
    public var services: [RegisteredService]
    /// Paths of the `GattProfile1` objects it exported (client-role auto-connect profiles).
    public var profiles: [ObjectPath]
}

/// A service of a ``RegisteredApplication``.
public struct RegisteredService: Sendable, Hashable {
    /// The object path in the application.
    public var path: ObjectPath
    /// The UUID, 128-bit lower case.
    public var uuid: String
    /// Whether it is a primary service.
    public var primary: Bool
    /// The paths of included services.
    public var includes: [ObjectPath]
    /// The first handle of the service (its declaration).
    public var handle: UInt16
    /// The last handle the service occupies.
    public var endHandle: UInt16
    /// Its characteristics, in handle order.
    public var characteristics: [RegisteredCharacteristic]
}

/// A characteristic of a ``RegisteredService``.
public struct RegisteredCharacteristic: Sendable, Hashable {
    /// The object path in the application.
    public var path: ObjectPath
    /// The UUID, 128-bit lower case.
    public var uuid: String
    /// The `Flags` strings as the application exported them.
    public var flags: [String]
    /// The handle of the characteristic value (what bluetoothd writes back as `Handle`).
    public var handle: UInt16
    /// The handle of the Client Characteristic Configuration descriptor bluetoothd adds for
    /// `notify`/`indicate` characteristics, if any.
    public var cccHandle: UInt16?
    /// Whether the application exports `WriteAcquired` (writes go through `AcquireWrite`).
    public var supportsAcquireWrite: Bool
    /// Whether the application exports `NotifyAcquired` (subscriptions use `AcquireNotify`).
    public var supportsAcquireNotify: Bool
    /// The application's own descriptors, in handle order.
    public var descriptors: [RegisteredDescriptor]
    /// The remote centrals subscribed now (addresses), sorted.
    public var subscribedCentrals: [String]
}

/// A descriptor of a ``RegisteredCharacteristic``.
public struct RegisteredDescriptor: Sendable, Hashable {
    /// The object path in the application.
    public var path: ObjectPath
    /// The UUID, 128-bit lower case.
    public var uuid: String
    /// The `Flags` strings as the application exported them.
    public var flags: [String]
    /// The descriptor's handle.
    public var handle: UInt16
}

extension RegisteredCharacteristic {
    /// A notification-capable flag is set (`notify` or one of its security variants).
    var canNotify: Bool { flags.contains { $0 == "notify" || $0.hasSuffix("-notify") } }
    /// An indication-capable flag is set (`indicate` or one of its security variants).
    var canIndicate: Bool { flags.contains { $0 == "indicate" || $0.hasSuffix("-indicate") } }
    /// bluetoothd adds an Extended Properties descriptor for these flags.
    var hasExtendedProperties: Bool { flags.contains("reliable-write") || flags.contains("writable-auxiliaries") }
    /// A remote read is allowed by the flags.
    var isReadable: Bool { ServerFlags.readable(flags) }
    /// A remote write is allowed by the flags.
    var isWritable: Bool { ServerFlags.writable(flags) || flags.contains("write-without-response") }
}

extension RegisteredDescriptor {
    /// A remote read is allowed by the flags.
    var isReadable: Bool { ServerFlags.readable(flags) }
    /// A remote write is allowed by the flags.
    var isWritable: Bool { ServerFlags.writable(flags) }
}

/// Which server-side flags grant ATT read and write permission (`parse_chrc_flags`).
enum ServerFlags {
    static func readable(_ flags: [String]) -> Bool {
        flags.contains { ["read", "encrypt-read", "encrypt-authenticated-read", "secure-read"].contains($0) }
    }

    static func writable(_ flags: [String]) -> Bool {
        flags.contains {
            [
                "write", "authenticated-signed-writes", "reliable-write", "encrypt-write",
                "encrypt-authenticated-write", "secure-write",
            ].contains($0)
        }
    }
}
