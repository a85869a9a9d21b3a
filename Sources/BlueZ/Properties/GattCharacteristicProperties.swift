import DBus
import Foundation

/// The properties of `org.bluez.GattCharacteristic1`: a remote characteristic
/// (bluez-dbus-api.md §4.3) or one an application exports (§5.2).
///
/// `UUID`, `Service` and `Flags` are required on both sides. Everything else is optional:
/// `Value` (always present on remote characteristics, optional on exported ones), `Notifying`
/// (only with `notify`/`indicate`), `WriteAcquired`/`NotifyAcquired` (their presence advertises
/// AcquireWrite/AcquireNotify), `MTU` (while a GATT client is live) and `Handle` (≥5.69).
public struct GattCharacteristicProperties: BlueZInterfaceProperties {
    /// The property names.
    public enum Key {
        /// `UUID` `s`
        public static let uuid = "UUID"
        /// `Service` `o`
        public static let service = "Service"
        /// `Value` `ay`
        public static let value = "Value"
        /// `Notifying` `b`
        public static let notifying = "Notifying"
        /// `Flags` `as`
        public static let flags = "Flags"
        /// `WriteAcquired` `b`
        public static let writeAcquired = "WriteAcquired"
        /// `NotifyAcquired` `b`
        public static let notifyAcquired = "NotifyAcquired"
        /// `MTU` `q`
        public static let mtu = "MTU"
        /// `Handle` `q`
        public static let handle = "Handle"
    }

    /// `org.bluez.GattCharacteristic1`
    public static var interface: InterfaceName { BlueZInterface.gattCharacteristic1 }

    /// `UUID` `s`.
    public var uuid: String
    /// `Service` `o`: the service the characteristic belongs to.
    public var service: ObjectPath
    /// `Value` `ay`: the cached value (`[]` until the first read or notification).
    public var value: Data?
    /// `Notifying` `b`: notifications or indications are enabled. Not reset on disconnect.
    public var notifying: Bool?
    /// The known strings of `Flags` `as`.
    public var flags: GattCharacteristicFlags
    /// The strings of `Flags` this module does not know, kept in order so nothing is lost.
    public var unknownFlags: [String]
    /// `WriteAcquired` `b`: present with `write-without-response`.
    public var writeAcquired: Bool?
    /// `NotifyAcquired` `b`: present with `notify`.
    public var notifyAcquired: Bool?
    /// `MTU` `q`: the ATT MTU (not the payload size, which is MTU − 3).
    public var mtu: UInt16?
    /// `Handle` `q` (≥5.69): the declaration handle.
    public var handle: UInt16?

    /// Creates characteristic properties from their values.
    public init(
        uuid: String, service: ObjectPath, value: Data? = nil, notifying: Bool? = nil,
        flags: GattCharacteristicFlags, unknownFlags: [String] = [], writeAcquired: Bool? = nil,
        notifyAcquired: Bool? = nil, mtu: UInt16? = nil, handle: UInt16? = nil
    ) {
        self.uuid = uuid
        self.service = service
        self.value = value
        self.notifying = notifying
        self.flags = flags
        self.unknownFlags = unknownFlags
        self.writeAcquired = writeAcquired
        self.notifyAcquired = notifyAcquired
        self.mtu = mtu
        self.handle = handle
    }

    /// Decodes `GattCharacteristic1` properties; see ``BlueZInterfaceProperties`` for the rules.
    public init(properties: [String: DBusValue]) throws(DBusError) {
        let reader = PropertyReader(Self.interface, properties)
        let (flags, unknown) = GattCharacteristicFlags.parse(try reader.required(Key.flags))
        self.init(
            uuid: try reader.required(Key.uuid),
            service: try reader.required(Key.service),
            value: try reader.optional(Key.value),
            notifying: try reader.optional(Key.notifying),
            flags: flags,
            unknownFlags: unknown,
            writeAcquired: try reader.optional(Key.writeAcquired),
            notifyAcquired: try reader.optional(Key.notifyAcquired),
            mtu: try reader.optional(Key.mtu),
            handle: try reader.optional(Key.handle))
    }

    /// Applies a `PropertiesChanged` signal; see ``BlueZInterfaceProperties``.
    public mutating func apply(changed: [String: DBusValue], invalidated: [String]) throws(DBusError) {
        try applyChanges(to: &self, changed: changed, invalidated: invalidated)
    }

    /// The `Flags` strings: the known flags in bluetoothd's order, then the unknown ones.
    public var flagStrings: [String] { flags.strings + unknownFlags }

    /// ``handle``, or on BlueZ versions without it the handle in the characteristic's `path`
    /// (`…/char000b`).
    public func resolvedHandle(path: ObjectPath) -> UInt16? {
        handle ?? BlueZPath.characteristicHandle(of: path)
    }

    /// The properties with their exact D-Bus types; absent optionals are left out.
    public var dbusProperties: [String: DBusValue] {
        var out: [String: DBusValue] = [
            Key.uuid: uuid.dbusValue, Key.service: service.dbusValue, Key.flags: flagStrings.arrayValue,
        ]
        out[Key.value] = value?.dbusValue
        out[Key.notifying] = notifying?.dbusValue
        out[Key.writeAcquired] = writeAcquired?.dbusValue
        out[Key.notifyAcquired] = notifyAcquired?.dbusValue
        out[Key.mtu] = mtu?.dbusValue
        out[Key.handle] = handle?.dbusValue
        return out
    }
}

extension GattCharacteristicProperties: PropertyUpdating {
    mutating func update(_ key: String, _ value: DBusValue) throws(DBusError) {
        let decoding = PropertyDecoding(interface: Self.interface)
        switch key {
        case Key.uuid: uuid = try decoding.decode(key, value)
        case Key.service: service = try decoding.decode(key, value)
        case Key.value: self.value = try decoding.decode(key, value, as: Data.self)
        case Key.notifying: notifying = try decoding.decode(key, value, as: Bool.self)
        case Key.flags: (flags, unknownFlags) = GattCharacteristicFlags.parse(try decoding.decode(key, value))
        case Key.writeAcquired: writeAcquired = try decoding.decode(key, value, as: Bool.self)
        case Key.notifyAcquired: notifyAcquired = try decoding.decode(key, value, as: Bool.self)
        case Key.mtu: mtu = try decoding.decode(key, value, as: UInt16.self)
        case Key.handle: handle = try decoding.decode(key, value, as: UInt16.self)
        default: break
        }
    }

    mutating func invalidate(_ key: String) {
        switch key {
        case Key.value: value = nil
        case Key.notifying: notifying = nil
        case Key.writeAcquired: writeAcquired = nil
        case Key.notifyAcquired: notifyAcquired = nil
        case Key.mtu: mtu = nil
        case Key.handle: handle = nil
        default: break
        }
    }
}
