import DBus
import Foundation

/// The properties of `org.bluez.GattDescriptor1`: a remote descriptor (bluez-dbus-api.md §4.5)
/// or one an application exports (§5.2).
///
/// `UUID` and `Characteristic` are required. `Value` is always present on remote descriptors
/// and optional on exported ones; `Flags` exists only on exported descriptors; `Handle` from
/// BlueZ 5.69.
public struct GattDescriptorProperties: BlueZInterfaceProperties {
    /// The property names.
    public enum Key {
        /// `UUID` `s`
        public static let uuid = "UUID"
        /// `Characteristic` `o`
        public static let characteristic = "Characteristic"
        /// `Value` `ay`
        public static let value = "Value"
        /// `Flags` `as`
        public static let flags = "Flags"
        /// `Handle` `q`
        public static let handle = "Handle"
    }

    /// `org.bluez.GattDescriptor1`
    public static var interface: InterfaceName { BlueZInterface.gattDescriptor1 }

    /// `UUID` `s`.
    public var uuid: String
    /// `Characteristic` `o`: the characteristic the descriptor belongs to.
    public var characteristic: ObjectPath
    /// `Value` `ay`: the cached value, updated after a successful read.
    public var value: Data?
    /// The known strings of `Flags` `as`; `nil` when there is no `Flags` property (remote).
    public var flags: GattDescriptorFlags?
    /// The strings of `Flags` this module does not know, kept in order so nothing is lost.
    public var unknownFlags: [String]
    /// `Handle` `q` (≥5.69).
    public var handle: UInt16?

    /// Creates descriptor properties from their values.
    public init(
        uuid: String, characteristic: ObjectPath, value: Data? = nil, flags: GattDescriptorFlags? = nil,
        unknownFlags: [String] = [], handle: UInt16? = nil
    ) {
        self.uuid = uuid
        self.characteristic = characteristic
        self.value = value
        self.flags = flags
        self.unknownFlags = unknownFlags
        self.handle = handle
    }

    /// Decodes `GattDescriptor1` properties; see ``BlueZInterfaceProperties`` for the rules.
    public init(properties: [String: DBusValue]) throws(DBusError) {
        let reader = PropertyReader(Self.interface, properties)
        let parsed = try reader.optional(Key.flags, as: [String].self).map(GattDescriptorFlags.parse)
        self.init(
            uuid: try reader.required(Key.uuid),
            characteristic: try reader.required(Key.characteristic),
            value: try reader.optional(Key.value),
            flags: parsed?.flags,
            unknownFlags: parsed?.unknown ?? [],
            handle: try reader.optional(Key.handle))
    }

    /// Applies a `PropertiesChanged` signal; see ``BlueZInterfaceProperties``.
    public mutating func apply(changed: [String: DBusValue], invalidated: [String]) throws(DBusError) {
        try applyChanges(to: &self, changed: changed, invalidated: invalidated)
    }

    /// The `Flags` strings (known flags in bluetoothd's order, then unknown ones), or `nil`
    /// when the descriptor has no `Flags` property.
    public var flagStrings: [String]? { flags.map { $0.strings + unknownFlags } }

    /// ``handle``, or on BlueZ versions without it the handle in the descriptor's `path`
    /// (`…/desc000d`).
    public func resolvedHandle(path: ObjectPath) -> UInt16? {
        handle ?? BlueZPath.descriptorHandle(of: path)
    }

    /// The properties with their exact D-Bus types; absent optionals are left out.
    public var dbusProperties: [String: DBusValue] {
        var out: [String: DBusValue] = [Key.uuid: uuid.dbusValue, Key.characteristic: characteristic.dbusValue]
        out[Key.value] = value?.dbusValue
        out[Key.flags] = flagStrings?.arrayValue
        out[Key.handle] = handle?.dbusValue
        return out
    }
}

extension GattDescriptorProperties: PropertyUpdating {
    mutating func update(_ key: String, _ value: DBusValue) throws(DBusError) {
        let decoding = PropertyDecoding(interface: Self.interface)
        switch key {
        case Key.uuid: uuid = try decoding.decode(key, value)
        case Key.characteristic: characteristic = try decoding.decode(key, value)
        case Key.value: self.value = try decoding.decode(key, value, as: Data.self)
        case Key.flags:
            let parsed = GattDescriptorFlags.parse(try decoding.decode(key, value))
            (flags, unknownFlags) = (parsed.flags, parsed.unknown)
        case Key.handle: handle = try decoding.decode(key, value, as: UInt16.self)
        default: break
        }
    }

    mutating func invalidate(_ key: String) {
        switch key {
        case Key.value: value = nil
        case Key.flags: (flags, unknownFlags) = (nil, [])
        case Key.handle: handle = nil
        default: break
        }
    }
}
