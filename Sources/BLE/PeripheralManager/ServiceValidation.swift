import BlueZ
import Foundation

/// The checks bluetoothd makes when it reads an application (bluez-dbus-api.md §5.2), made
/// before exporting, so a bad service is a typed error instead of a failed registration.
enum ServiceValidation {
    /// The longest attribute value (ATT).
    static let maximumValueLength = 512

    static func validate(_ service: MutableService) throws(BLEError) {
        try validUUID(service.uuid, "service")
        if let short = service.uuid.shortValue, short == 0x1800 || short == 0x1801 {
            throw BLEError(.invalidArguments, message: "bluetoothd provides the GAP and GATT services itself")
        }
        for characteristic in service.characteristics { try validate(characteristic) }
    }

    private static func validate(_ characteristic: MutableCharacteristic) throws(BLEError) {
        try validUUID(characteristic.uuid, "characteristic")
        guard !characteristic.flags.isEmpty else {
            throw BLEError(.invalidArguments, message: "characteristic \(characteristic.uuid) has no properties")
        }
        if let value = characteristic.value {
            let dynamic: CharacteristicProperties = [.write, .writeWithoutResponse, .notify, .indicate]
            guard characteristic.properties.isDisjoint(with: dynamic) else {
                throw BLEError(
                    .invalidArguments,
                    message: "characteristic \(characteristic.uuid) has a static value, so it can only be read")
            }
            try validLength(value)
        }
        for descriptor in characteristic.descriptors {
            try validUUID(descriptor.uuid, "descriptor")
            if let short = descriptor.uuid.shortValue, short == 0x2900 || short == 0x2902 {
                throw BLEError(.invalidArguments, message: "bluetoothd adds the \(descriptor.uuid) descriptor itself")
            }
            guard descriptor.permissions.allowsRead || descriptor.permissions.allowsWrite else {
                throw BLEError(.invalidArguments, message: "descriptor \(descriptor.uuid) has no permissions")
            }
            if let value = descriptor.value {
                guard !descriptor.permissions.allowsWrite else {
                    throw BLEError(.invalidArguments, message: "descriptor \(descriptor.uuid) has a static value")
                }
                try validLength(value)
            }
        }
    }

    private static func validUUID(_ uuid: BluetoothUUID, _ what: String) throws(BLEError) {
        guard uuid.isValid else { throw BLEError(.invalidArguments, message: "the \(what) UUID is not a UUID") }
    }

    static func validLength(_ value: Data) throws(BLEError) {
        guard value.count <= maximumValueLength else {
            throw BLEError(.invalidArguments, message: "\(value.count) bytes exceed the 512-byte attribute limit")
        }
    }
}

extension MutableCharacteristic {
    /// BlueZ's `Flags` for the properties and permissions (bluez-dbus-api.md §5.3).
    var flags: [String] {
        var flags: [String] = []
        let plain: [(CharacteristicProperties, String)] = [
            (.broadcast, "broadcast"), (.writeWithoutResponse, "write-without-response"), (.notify, "notify"),
            (.indicate, "indicate"), (.authenticatedSignedWrites, "authenticated-signed-writes"),
            (.extendedProperties, "extended-properties"), (.reliableWrite, "reliable-write"),
            (.writableAuxiliaries, "writable-auxiliaries"),
        ]
        if properties.contains(.read) { flags.append(permissions.readFlag) }
        if properties.contains(.write) { flags.append(permissions.writeFlag) }
        for (property, flag) in plain where properties.contains(property) { flags.append(flag) }
        if permissions.contains(.authorizationRequired) { flags.append("authorize") }
        return flags
    }

    /// Whether centrals can subscribe.
    var notifies: Bool { !properties.isDisjoint(with: [.notify, .indicate]) }
}

extension MutableDescriptor {
    /// BlueZ's descriptor `Flags`.
    var flags: [String] {
        var flags: [String] = []
        if permissions.allowsRead { flags.append(permissions.readFlag) }
        if permissions.allowsWrite { flags.append(permissions.writeFlag) }
        if permissions.contains(.authorizationRequired) { flags.append("authorize") }
        return flags
    }
}
