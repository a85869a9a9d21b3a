import BlueZ
import DBus
import Foundation

extension Daemon {
    /// Exports a resolved GATT database: one `InterfacesAdded` per service, characteristic and
    /// descriptor, in handle order (trace §13.2).
    /// Services claimed by a plugin are left out where the release hides them, and those in
    /// `skipping` (already exported) too.
    func exportGatt(_ layout: GattLayout, _ record: PeripheralRecord, device: ObjectPath, skipping: Set<Int> = []) {
        let handles = profile.gattHandles
        for (serviceIndex, service) in layout.services.enumerated() {
            if skipping.contains(serviceIndex) || (service.claimed && !profile.exportsClaimedServices) { continue }
            let includes = service.includes.compactMap { uuid in layout.services.first { $0.uuid == uuid }?.path }
            var serviceProperties = [
                ExportedProperty("UUID", value: .string(service.uuid)),
                ExportedProperty("Primary", value: .boolean(service.primary)),
                ExportedProperty("Device", value: .objectPath(device)),
                ExportedProperty("Includes", value: .array(.objectPath, includes.map { .objectPath($0) })),
            ]
            if handles { serviceProperties.append(ExportedProperty("Handle", value: .uint16(service.handle))) }
            try? connection.export(
                [ExportedInterface(BlueZInterface.gattService1, properties: serviceProperties)], at: service.path)
            for (characteristicIndex, characteristic) in service.characteristics.enumerated() {
                let key = ValueKey(service: service.index, characteristic: characteristicIndex)
                try? connection.export(
                    [
                        characteristicInterface(
                            characteristic, key: key, service: service, device: device, mtu: record.definition.mtu)
                    ],
                    at: characteristic.path)
                for (descriptorIndex, descriptor) in characteristic.descriptors.enumerated() {
                    let userIndex = descriptor.isCCC ? -2 : descriptorIndex - (characteristic.notifies ? 1 : 0)
                    let descriptorKey = ValueKey(
                        service: service.index, characteristic: characteristicIndex, descriptor: userIndex)
                    try? connection.export(
                        [
                            descriptorInterface(
                                descriptor, key: descriptorKey, characteristic: characteristic.path, device: device,
                                claimed: service.claimed)
                        ],
                        at: descriptor.path)
                }
            }
        }
    }

    private func characteristicInterface(
        _ characteristic: GattLayout.Characteristic, key: ValueKey, service: GattLayout.Service, device: ObjectPath,
        mtu: UInt16
    ) throws(DBusError) -> ExportedInterface {
        let flags = characteristic.flags
        var properties = [
            ExportedProperty("UUID", value: .string(characteristic.uuid)),
            ExportedProperty("Service", value: .objectPath(service.path)),
            ExportedProperty("Value", value: .bytes(Data())),
            ExportedProperty("Flags", value: .array(.string, flags.map { .string($0) })),
            // Objects are created after the MTU exchange, so MTU is in their InterfacesAdded. It
            // exists while the device has a GATT client and is never announced: the exchange
            // hook belongs to the first ATT link, so it comes and goes silently (Q10).
            ExportedProperty(GattCharacteristicProperties.Key.mtu, value: .uint16(mtu), changeSignal: .none),
        ]
        if characteristic.notifies { properties.append(ExportedProperty("Notifying", value: .boolean(false))) }
        if flags.contains("write-without-response") {
            properties.append(ExportedProperty("WriteAcquired", value: .boolean(false)))
        }
        // `notify` only, in every release (`characteristic_notify_acquired_exists`).
        if flags.contains("notify") {
            properties.append(ExportedProperty("NotifyAcquired", value: .boolean(false)))
        }
        if profile.gattHandles { properties.append(ExportedProperty("Handle", value: .uint16(characteristic.handle))) }
        let path = characteristic.path
        let target = GattTarget(
            device: device, path: path, key: key, uuid: characteristic.uuid, flags: flags, claimed: service.claimed)
        // A `weak let`, not `[weak self]`: a weak capture is a mutable box, and every call would
        // pay a run-time exclusivity check to read it.
        weak let daemon = self
        var methods: [ExportedMethod] = [
            .direct(BlueZMethod.readValue, in: try Signature("a{sv}"), out: try Signature("ay")) { call in
                daemon?.readValue(call, target) ?? .later(call.answerLater())
            },
            .deferred(BlueZMethod.writeValue, in: try Signature("aya{sv}")) { call, reply in
                daemon?.writeValue(call, reply, target)
            },
            .deferred(BlueZMethod.startNotify) { call, reply in daemon?.startNotify(call, reply, target) },
            .deferred(BlueZMethod.stopNotify) { call, reply in daemon?.stopNotify(call, reply, target) },
            .deferred(BlueZMethod.acquireNotify, in: try Signature("a{sv}"), out: try Signature("hq")) {
                call, reply in daemon?.acquireNotify(call, reply, target)
            },
            .deferred(BlueZMethod.acquireWrite, in: try Signature("a{sv}"), out: try Signature("hq")) {
                call, reply in daemon?.acquireWrite(call, reply, target)
            },
        ]
        methods.sort { $0.name.rawValue < $1.name.rawValue }
        return ExportedInterface(BlueZInterface.gattCharacteristic1, methods: methods, properties: properties)
    }

    private func descriptorInterface(
        _ descriptor: GattLayout.Descriptor, key: ValueKey, characteristic: ObjectPath, device: ObjectPath,
        claimed: Bool
    ) throws(DBusError) -> ExportedInterface {
        var properties = [
            ExportedProperty("UUID", value: .string(descriptor.uuid)),
            ExportedProperty("Characteristic", value: .objectPath(characteristic)),
            ExportedProperty("Value", value: .bytes(Data())),
        ]
        if profile.gattHandles { properties.append(ExportedProperty("Handle", value: .uint16(descriptor.handle))) }
        let target = GattTarget(
            device: device, path: descriptor.path, key: key, uuid: descriptor.uuid,
            flags: descriptor.writable ? ["read", "write"] : ["read"], claimed: claimed, isDescriptor: true,
            isCCC: descriptor.isCCC)
        weak let daemon = self
        return ExportedInterface(
            BlueZInterface.gattDescriptor1,
            methods: [
                .direct(BlueZMethod.readValue, in: try Signature("a{sv}"), out: try Signature("ay")) { call in
                    daemon?.readValue(call, target) ?? .later(call.answerLater())
                },
                .deferred(BlueZMethod.writeValue, in: try Signature("aya{sv}")) { call, reply in
                    daemon?.writeValue(call, reply, target)
                },
            ], properties: properties)
    }
}

/// What a GATT method call acts on.
struct GattTarget: Sendable {
    var device: ObjectPath
    var path: ObjectPath
    var key: ValueKey
    var uuid: String
    var flags: [String]
    /// Its service is claimed by a plugin: exported read-only (≥ 5.80), writes `NotAuthorized`.
    var claimed = false
    var isDescriptor = false
    var isCCC = false

    var interface: InterfaceName { isDescriptor ? BlueZInterface.gattDescriptor1 : BlueZInterface.gattCharacteristic1 }
    var notifies: Bool { flags.contains("notify") || flags.contains("indicate") }
}
