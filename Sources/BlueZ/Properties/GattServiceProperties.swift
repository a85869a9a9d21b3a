import DBus

/// The properties of `org.bluez.GattService1`: a remote service (bluez-dbus-api.md §4.2) or
/// one an application exports (§5.2).
///
/// `UUID` and `Primary` are required on both sides. Remote services always carry `Device` and
/// `Includes`, exported ones usually do not, so both are optional here; `Handle` exists from
/// BlueZ 5.69 (use ``resolvedHandle(path:)`` to fall back to the path on 5.66).
public struct GattServiceProperties: BlueZInterfaceProperties {
    /// The property names.
    public enum Key {
        /// `UUID` `s`
        public static let uuid = "UUID"
        /// `Primary` `b`
        public static let primary = "Primary"
        /// `Device` `o`
        public static let device = "Device"
        /// `Includes` `ao`
        public static let includes = "Includes"
        /// `Handle` `q`
        public static let handle = "Handle"
    }

    /// `org.bluez.GattService1`
    public static var interface: InterfaceName { BlueZInterface.gattService1 }

    /// `UUID` `s`: 128-bit, lower-case for remote services.
    public var uuid: String
    /// `Primary` `b`.
    public var primary: Bool
    /// `Device` `o`: the device of a remote service; absent on exported services.
    public var device: ObjectPath?
    /// `Includes` `ao`: paths of included services.
    public var includes: [ObjectPath]?
    /// `Handle` `q` (≥5.69): the start handle.
    public var handle: UInt16?

    /// Creates service properties from their values.
    public init(
        uuid: String, primary: Bool = true, device: ObjectPath? = nil, includes: [ObjectPath]? = nil,
        handle: UInt16? = nil
    ) {
        self.uuid = uuid
        self.primary = primary
        self.device = device
        self.includes = includes
        self.handle = handle
    }

    /// Decodes `GattService1` properties; see ``BlueZInterfaceProperties`` for the rules.
    public init(properties: [String: DBusValue]) throws(DBusError) {
        let reader = PropertyReader(Self.interface, properties)
        self.init(
            uuid: try reader.required(Key.uuid),
            primary: try reader.required(Key.primary),
            device: try reader.optional(Key.device),
            includes: try reader.optional(Key.includes),
            handle: try reader.optional(Key.handle))
    }

    /// Applies a `PropertiesChanged` signal; see ``BlueZInterfaceProperties``.
    public mutating func apply(changed: [String: DBusValue], invalidated: [String]) throws(DBusError) {
        try applyChanges(to: &self, changed: changed, invalidated: invalidated)
    }

    /// ``handle``, or on BlueZ versions without it the handle in the service's `path`
    /// (`…/service000a`).
    public func resolvedHandle(path: ObjectPath) -> UInt16? {
        handle ?? BlueZPath.serviceHandle(of: path)
    }

    /// The properties with their exact D-Bus types; absent optionals are left out.
    public var dbusProperties: [String: DBusValue] {
        var out: [String: DBusValue] = [Key.uuid: uuid.dbusValue, Key.primary: primary.dbusValue]
        out[Key.device] = device?.dbusValue
        out[Key.includes] = includes?.arrayValue
        out[Key.handle] = handle?.dbusValue
        return out
    }
}

extension GattServiceProperties: PropertyUpdating {
    mutating func update(_ key: String, _ value: DBusValue) throws(DBusError) {
        let decoding = PropertyDecoding(interface: Self.interface)
        switch key {
        case Key.uuid: uuid = try decoding.decode(key, value)
        case Key.primary: primary = try decoding.decode(key, value)
        case Key.device: device = try decoding.decode(key, value, as: ObjectPath.self)
        case Key.includes: includes = try decoding.decode(key, value, as: [ObjectPath].self)
        case Key.handle: handle = try decoding.decode(key, value, as: UInt16.self)
        default: break
        }
    }

    mutating func invalidate(_ key: String) {
        switch key {
        case Key.device: device = nil
        case Key.includes: includes = nil
        case Key.handle: handle = nil
        default: break
        }
    }
}
