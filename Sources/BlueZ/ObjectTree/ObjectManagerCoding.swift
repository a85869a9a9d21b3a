import DBus

/// Decodes and encodes the dictionaries of `org.freedesktop.DBus.ObjectManager` and
/// `org.freedesktop.DBus.Properties`: `a{sv}` properties, `a{sa{sv}}` interfaces and
/// `a{oa{sa{sv}}}` managed objects.
///
/// Decoding checks the exact D-Bus type and unwraps each property's variant; encoding sorts
/// entries by key and wraps each property value in a variant.
public enum ObjectManagerCoding {
    /// The type `a{sv}`.
    public static let propertiesType = DBusType.dictionary(key: .string, value: .variant)
    /// The type `a{sa{sv}}`.
    public static let interfacesType = DBusType.dictionary(key: .string, value: propertiesType)
    /// The type `a{oa{sa{sv}}}`.
    public static let managedObjectsType = DBusType.dictionary(key: .objectPath, value: interfacesType)

    /// An `a{sv}` (e.g. a `GetAll` reply or an options argument) as name → value, variants
    /// unwrapped; a repeated key keeps its last value.
    ///
    /// - Throws: ``DBus/DBusError`` with code `.typeMismatch` for any other type.
    public static func decodeProperties(_ value: DBusValue) throws(DBusError) -> [String: DBusValue] {
        guard value.type == propertiesType, case .dictionary(_, _, let entries) = value else {
            throw mismatch(expected: propertiesType, got: value)
        }
        var out = [String: DBusValue](room: entries.count)
        for entry in entries {
            guard case .string(let key) = entry.key else { throw mismatch(expected: propertiesType, got: value) }
            out[key] = PropertyDecoding.unwrapped(entry.value)
        }
        return out
    }

    /// An `a{sa{sv}}` as interface → properties.
    ///
    /// - Throws: ``DBus/DBusError`` with code `.typeMismatch` for any other type or an invalid
    ///   interface name.
    public static func decodeInterfaces(
        _ value: DBusValue
    ) throws(DBusError) -> [InterfaceName: [String: DBusValue]] {
        guard value.type == interfacesType, case .dictionary(_, _, let entries) = value else {
            throw mismatch(expected: interfacesType, got: value)
        }
        var out = [InterfaceName: [String: DBusValue]](room: entries.count)
        for entry in entries {
            guard case .string(let text) = entry.key else { throw mismatch(expected: interfacesType, got: value) }
            out[try interfaceName(text)] = try decodeProperties(entry.value)
        }
        return out
    }

    /// An `a{oa{sa{sv}}}` (a `GetManagedObjects` reply) as path → interface → properties.
    ///
    /// - Throws: ``DBus/DBusError`` with code `.typeMismatch` for any other type or an invalid
    ///   interface name.
    public static func decodeManagedObjects(
        _ value: DBusValue
    ) throws(DBusError) -> [ObjectPath: [InterfaceName: [String: DBusValue]]] {
        guard value.type == managedObjectsType, case .dictionary(_, _, let entries) = value else {
            throw mismatch(expected: managedObjectsType, got: value)
        }
        var out = [ObjectPath: [InterfaceName: [String: DBusValue]]](room: entries.count)
        for entry in entries {
            guard case .objectPath(let path) = entry.key else {
                throw mismatch(expected: managedObjectsType, got: value)
            }
            out[path] = try decodeInterfaces(entry.value)
        }
        return out
    }

    /// Properties as an `a{sv}`, sorted by name, each value in a variant (one already in a
    /// variant is not wrapped twice).
    public static func encodeProperties(_ properties: [String: DBusValue]) -> DBusValue {
        .dictionary(
            key: .string, value: .variant,
            properties.sorted { $0.key < $1.key }.map {
                DBusDictionaryEntry(.string($0.key), .variant(PropertyDecoding.unwrapped($0.value)))
            })
    }

    /// Interfaces as an `a{sa{sv}}`, sorted by name.
    public static func encodeInterfaces(_ interfaces: [InterfaceName: [String: DBusValue]]) -> DBusValue {
        .dictionary(
            key: .string, value: propertiesType,
            interfaces.sorted { $0.key < $1.key }.map {
                DBusDictionaryEntry(.string($0.key.rawValue), encodeProperties($0.value))
            })
    }

    /// Objects as an `a{oa{sa{sv}}}`, sorted by path: the body of a `GetManagedObjects` reply.
    public static func encodeManagedObjects(
        _ objects: [ObjectPath: [InterfaceName: [String: DBusValue]]]
    ) -> DBusValue {
        .dictionary(
            key: .objectPath, value: interfacesType,
            objects.sorted { $0.key < $1.key }.map {
                DBusDictionaryEntry(.objectPath($0.key), encodeInterfaces($0.value))
            })
    }

    /// The interfaces bluetoothd puts on its objects, found without validating their names
    /// again (every advertisement of a new device brings three of them).
    private static let knownInterfaces: [String: InterfaceName] = Dictionary(
        uniqueKeysWithValues: [
            BlueZInterface.adapter1, BlueZInterface.device1, BlueZInterface.gattService1,
            BlueZInterface.gattCharacteristic1, BlueZInterface.gattDescriptor1, BlueZInterface.gattManager1,
            BlueZInterface.leAdvertisingManager1, BlueZInterface.agentManager1, BlueZInterface.battery1,
            .introspectable, .properties,
        ].map { ($0.rawValue, $0) })

    private static func interfaceName(_ text: String) throws(DBusError) -> InterfaceName {
        if let known = knownInterfaces[text] { return known }
        do {
            return try InterfaceName(text)
        } catch {
            throw DBusError(.typeMismatch, message: "invalid interface name: \(error.message)")
        }
    }

    private static func mismatch(expected: DBusType, got value: DBusValue) -> DBusError {
        DBusError(.typeMismatch, message: "expected \(expected.signature), got \(value.type.signature)")
    }
}
