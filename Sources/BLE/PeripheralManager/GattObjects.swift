import BlueZ
import DBus
import Foundation

/// The D-Bus objects of one published service (bluez-dbus-api.md §5.2): `GattService1`,
/// `GattCharacteristic1` and `GattDescriptor1` with the methods bluetoothd calls (§5.4).
struct GattObjects {
    let core: GattServerCore
    /// Whether notifying characteristics offer `AcquireNotify` (`NotifyAcquired` exported).
    let acquireNotify: Bool

    /// Every object of `published`, service first, with the attributes the handlers serve.
    func objects(
        for published: PublishedService, includes: [ObjectPath]
    ) throws(DBusError) -> [(ObjectPath, [ExportedInterface], PublishedAttribute?)] {
        let service = published.service
        var out: [(ObjectPath, [ExportedInterface], PublishedAttribute?)] = [
            (
                published.path,
                [
                    ExportedInterface(
                        BlueZInterface.gattService1,
                        properties: [
                            ExportedProperty("UUID", value: .string(service.uuid.uuidString)),
                            ExportedProperty("Primary", value: .boolean(service.isPrimary)),
                            ExportedProperty("Includes", value: .array(.objectPath, includes.map { .objectPath($0) })),
                        ])
                ], nil
            )
        ]
        for (index, characteristic) in service.characteristics.enumerated() {
            let path = published.characteristicPath(index)
            let attribute = PublishedAttribute(
                service: service.uuid, characteristic: characteristic.uuid, staticValue: characteristic.value)
            out.append((path, [try characteristicInterface(characteristic, path, published.path)], attribute))
            for (position, descriptor) in characteristic.descriptors.enumerated() {
                let descriptorPath = published.descriptorPath(index, position)
                let described = PublishedAttribute(
                    service: service.uuid, characteristic: characteristic.uuid, descriptor: descriptor.uuid,
                    staticValue: descriptor.value)
                out.append((descriptorPath, [try descriptorInterface(descriptor, descriptorPath, path)], described))
            }
        }
        return out
    }

    private func characteristicInterface(
        _ characteristic: MutableCharacteristic, _ path: ObjectPath, _ service: ObjectPath
    ) throws(DBusError) -> ExportedInterface {
        var properties = [
            ExportedProperty("UUID", value: .string(characteristic.uuid.uuidString)),
            ExportedProperty("Service", value: .objectPath(service)),
            ExportedProperty("Flags", value: .array(.string, characteristic.flags.map { .string($0) })),
        ]
        var methods = try valueMethods(path, BlueZInterface.gattCharacteristic1)
        if characteristic.notifies {
            // PropertiesChanged(Value) is how values reach centrals without a channel.
            properties.append(ExportedProperty("Value", value: .bytes(characteristic.value ?? Data())))
            methods += try notifyMethods(path)
            if acquireNotify { properties.append(ExportedProperty("NotifyAcquired", value: .boolean(false))) }
        }
        // Only bluetoothd may read, write or subscribe: another client on the bus gets AccessDenied.
        return ExportedInterface(
            BlueZInterface.gattCharacteristic1, methods: methods, properties: properties,
            acceptedSender: BlueZService.busName)
    }

    private func descriptorInterface(
        _ descriptor: MutableDescriptor, _ path: ObjectPath, _ characteristic: ObjectPath
    ) throws(DBusError) -> ExportedInterface {
        ExportedInterface(
            BlueZInterface.gattDescriptor1, methods: try valueMethods(path, BlueZInterface.gattDescriptor1),
            properties: [
                ExportedProperty("UUID", value: .string(descriptor.uuid.uuidString)),
                ExportedProperty("Characteristic", value: .objectPath(characteristic)),
                ExportedProperty("Flags", value: .array(.string, descriptor.flags.map { .string($0) })),
            ], acceptedSender: BlueZService.busName)
    }

    /// `ReadValue` and `WriteValue`, answered later (the app decides when).
    private func valueMethods(_ path: ObjectPath, _ interface: InterfaceName) throws(DBusError) -> [ExportedMethod] {
        let options = try Signature("a{sv}")
        return [
            .deferred(BlueZMethod.readValue, in: options, out: try Signature("ay")) { [weak core] call, reply in
                guard let core else { return reply.fail(ATTError.unlikely.reply) }
                core.read(call, reply, at: path)
            },
            .deferred(BlueZMethod.writeValue, in: try Signature("aya{sv}")) { [weak core] call, reply in
                guard let core else { return reply.fail(ATTError.unlikely.reply) }
                core.write(call, reply, at: path)
            },
        ]
    }

    /// `StartNotify`, `StopNotify`, `Confirm` and `AcquireNotify`: quick, answered on the I/O thread.
    private func notifyMethods(_ path: ObjectPath) throws(DBusError) -> [ExportedMethod] {
        var methods: [ExportedMethod] = [
            .immediate(BlueZMethod.startNotify) { [weak core] _ in
                core?.startNotify(at: path)
                return []
            },
            .immediate(BlueZMethod.stopNotify) { [weak core] _ in
                core?.stopNotify(at: path)
                return []
            },
            .immediate(BlueZMethod.confirm) { [weak core] _ in
                core?.confirm(at: path)
                return []
            },
        ]
        if acquireNotify {
            methods.append(
                .immediate(BlueZMethod.acquireNotify, in: try Signature("a{sv}"), out: try Signature("hq")) {
                    [weak core] call in
                    guard let core else { throw DBusError.reply(BlueZErrorName.failed, "closed") }
                    do throws(BLEError) {
                        return try core.acquireNotify(call, at: path)
                    } catch {
                        // bluetoothd falls back to StartNotify.
                        throw DBusError.reply(BlueZErrorName.failed, error.message)
                    }
                })
        }
        return methods
    }
}
