import BlueZ
import DBus

/// A device's services, characteristics and descriptors as decoded from the mirror, kept while
/// the mirror's layout version for the device stays (``BlueZ/BlueZObjectTree/gattLayoutVersion(of:)``).
///
/// bluetoothd keeps a device's GATT objects across links (Q3), so a reconnection usually finds
/// them unchanged: discovery then builds its answer from this snapshot and decodes nothing,
/// where decoding every object at every connection was a fifth of a connection's cost.
struct GattLayout {
    struct ServiceEntry {
        var uuid: BluetoothUUID
        var isPrimary: Bool
        var handle: UInt16?
        /// The paths of the services it includes (`Includes`), those the mirror holds.
        var includedPaths: [ObjectPath]
        var path: ObjectPath
        var characteristics: [CharacteristicEntry]
    }

    struct CharacteristicEntry {
        var path: ObjectPath
        var uuid: BluetoothUUID
        var properties: CharacteristicProperties
        var handle: UInt16?
        var descriptors: [Descriptor]
    }

    /// The mirror's layout version this snapshot was taken at.
    let version: UInt64
    /// The services in path order; objects whose properties do not decode are left out.
    let services: [ServiceEntry]

    /// Decodes the objects below `device` in `tree`.
    init(device: ObjectPath, tree: BlueZObjectTree) {
        version = tree.gattLayoutVersion(of: device)
        services = tree.servicePaths(of: device).compactMap { servicePath -> ServiceEntry? in
            guard let properties = (try? tree.service(at: servicePath)) ?? nil else { return nil }
            let included = (properties.includes ?? []).filter { path in
                ((try? tree.service(at: path)) ?? nil) != nil
            }
            return ServiceEntry(
                uuid: BluetoothUUID(properties.uuid), isPrimary: properties.primary,
                handle: BlueZPath.serviceHandle(of: servicePath), includedPaths: included, path: servicePath,
                characteristics: tree.characteristicPaths(of: servicePath).compactMap { Self.characteristic($0, tree) })
        }
    }

    private static func characteristic(_ path: ObjectPath, _ tree: BlueZObjectTree) -> CharacteristicEntry? {
        guard let properties = (try? tree.characteristic(at: path)) ?? nil else { return nil }
        let descriptors = tree.descriptorPaths(of: path).compactMap { descriptorPath -> Descriptor? in
            guard let descriptor = (try? tree.descriptor(at: descriptorPath)) ?? nil else { return nil }
            return Descriptor(
                uuid: BluetoothUUID(descriptor.uuid), handle: BlueZPath.descriptorHandle(of: descriptorPath),
                path: descriptorPath)
        }
        return CharacteristicEntry(
            path: path, uuid: BluetoothUUID(properties.uuid),
            properties: CharacteristicProperties(flags: properties.flags.strings),
            handle: properties.handle ?? BlueZPath.characteristicHandle(of: path), descriptors: descriptors)
    }
}
