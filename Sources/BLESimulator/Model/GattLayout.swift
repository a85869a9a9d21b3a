import BlueZ
import DBus
import Foundation

/// The attribute handles and object paths bluetoothd would give a peripheral's GATT database
/// (the standard services at handles 1–9, the declared ones from 0x000a): a service at its
/// start handle, each characteristic at its declaration handle (value handle next), a CCC
/// descriptor after notifying characteristics, then the declared descriptors.
struct GattLayout: Sendable {
    struct Service: Sendable {
        var path: ObjectPath
        var handle: UInt16
        var uuid: String
        var primary: Bool
        var includes: [String]
        var characteristics: [Characteristic]
        /// Claimed by a bluetoothd plugin (see ``BlueZProfile/claimedServiceUUIDs``).
        var claimed = false
        /// Where its values are kept (``ValueKey/service``): its position among the declared
        /// services, negative for the standard ones.
        var index: Int
    }

    struct Characteristic: Sendable {
        var path: ObjectPath
        var handle: UInt16
        var uuid: String
        var flags: [String]
        var definition: VirtualCharacteristic
        var descriptors: [Descriptor]
        var notifies: Bool { flags.contains("notify") || flags.contains("indicate") }
    }

    struct Descriptor: Sendable {
        var path: ObjectPath
        var handle: UInt16
        var uuid: String
        var value: Data
        var writable: Bool
        var isCCC: Bool
    }

    var services: [Service]

    /// The first handle of the declared services: the standard ones take handles 1–9 (GAP
    /// five, GATT four), as on most real peripherals; without them it stays 0x000a, so paths
    /// do not depend on the choice.
    static let firstHandle: UInt16 = 0x000a

    /// The layout of what `peripheral` serves (``VirtualPeripheral/servedServices``), or of its
    /// declared services alone when `standard` is false.
    init(
        peripheral: VirtualPeripheral, devicePath: ObjectPath, claimed: Set<String> = [], standard: Bool = true
    ) throws(DBusError) {
        if let clash = peripheral.declaredStandardService {
            throw DBusError(
                .invalidValue,
                message: "service \(clash) is a standard service: set standardServices to nil to declare it")
        }
        var handle: UInt16 = 1
        var services: [Service] = []
        for (index, service) in peripheral.servedServices where standard || index >= 0 {
            if index == 0 { handle = max(handle, Self.firstHandle) }
            services.append(
                try Self.service(service, index: index, at: &handle, devicePath: devicePath, claimed: claimed))
            // Leave a gap after each declared service, as real databases often do.
            if index >= 0 { handle = (handle | 0x000f) &+ 1 }
        }
        self.services = services
    }

    /// Lays out one service from `handle`, which it leaves at the service's end + 1.
    private static func service(
        _ service: VirtualService, index: Int, at handle: inout UInt16, devicePath: ObjectPath, claimed: Set<String>
    ) throws(DBusError) -> Service {
        guard let uuid = BlueZUUID.canonical(service.uuid) else {
            throw DBusError(.invalidValue, message: "service UUID \(service.uuid) is not a UUID")
        }
        let servicePath = try BlueZPath.service(handle: handle, device: devicePath)
        let serviceHandle = handle
        handle &+= 1
        var characteristics: [Characteristic] = []
        for characteristic in service.characteristics {
            guard let characteristicUUID = BlueZUUID.canonical(characteristic.uuid) else {
                throw DBusError(.invalidValue, message: "characteristic UUID \(characteristic.uuid) is not a UUID")
            }
            let declaration = handle
            let path = try BlueZPath.characteristic(handle: declaration, service: servicePath)
            handle &+= 2
            var descriptors: [Descriptor] = []
            if characteristic.flags.contains("notify") || characteristic.flags.contains("indicate") {
                descriptors.append(
                    Descriptor(
                        path: try BlueZPath.descriptor(handle: handle, characteristic: path),
                        handle: handle, uuid: BlueZUUID.canonical("2902") ?? "", value: Data([0, 0]),
                        writable: false, isCCC: true))
                handle &+= 1
            }
            for descriptor in characteristic.descriptors {
                guard let descriptorUUID = BlueZUUID.canonical(descriptor.uuid) else {
                    throw DBusError(.invalidValue, message: "descriptor UUID \(descriptor.uuid) is not a UUID")
                }
                descriptors.append(
                    Descriptor(
                        path: try BlueZPath.descriptor(handle: handle, characteristic: path), handle: handle,
                        uuid: descriptorUUID, value: descriptor.value.data, writable: descriptor.writable,
                        isCCC: false))
                handle &+= 1
            }
            characteristics.append(
                Characteristic(
                    path: path, handle: declaration, uuid: characteristicUUID,
                    flags: characteristic.flags.filter(AttributeSecurity.remoteFlags.contains),
                    definition: characteristic, descriptors: descriptors))
        }
        return Service(
            path: servicePath, handle: serviceHandle, uuid: uuid, primary: service.primary,
            includes: service.includes.compactMap(BlueZUUID.canonical), characteristics: characteristics,
            claimed: claimed.contains(uuid), index: index)
    }

    /// The service UUIDs, as `Device1.UUIDs` lists them after resolution.
    var serviceUUIDs: [String] { Array(Set(services.map(\.uuid))).sorted() }
}
