import BlueZ
import DBus
import Foundation

extension Daemon {
    /// Creates a device object: from an advertisement (temporary, with RSSI and advertising
    /// data in its one `InterfacesAdded`) or from storage (no RSSI, not temporary).
    func addDevice(
        _ state: inout SimState, _ definition: VirtualPeripheral, address: BluetoothAddress, adapter: AdapterState,
        fromStorage: Bool, rssi: Int16? = nil
    ) throws(DBusError) {
        let path = try BlueZPath.device(address, adapter: adapter.path)
        guard state.devices[path] == nil else { return }
        var device = DeviceState(path: path, adapterIndex: adapter.index, address: address)
        device.temporary = !fromStorage
        if fromStorage { device.storedServices = state.storedServices[address] }
        if let key = state.bonds[address] {
            device.paired = true
            device.bondSecurity = key
        }
        if !fromStorage {
            device.rssi = rssi
            device.txPower = definition.txPower
            device.manufacturerData = definition.manufacturerData.mapValues(\.data)
            device.serviceData = Self.serviceData(definition)
            device.seenThisDiscovery = true
            device.lastSeen = MonotonicNanos.now()
        }
        state.devices[path] = device
        try connection.export([deviceInterface(device, definition, adapter: adapter.path)], at: path)
    }

    private func deviceInterface(
        _ device: DeviceState, _ definition: VirtualPeripheral, adapter: ObjectPath
    ) throws(DBusError) -> ExportedInterface {
        let path = device.path
        var properties: [ExportedProperty] = [
            ExportedProperty("Address", value: .string(device.address.description)),
            ExportedProperty("AddressType", value: .string(definition.addressType)),
            ExportedProperty(
                "Alias", value: .string(definition.name ?? device.address.aliasFallback), access: .readwrite),
            ExportedProperty("Paired", value: .boolean(device.paired)),
            ExportedProperty("Bonded", value: .boolean(device.paired)),
            ExportedProperty("Trusted", value: .boolean(false), access: .readwrite),
            ExportedProperty("Blocked", value: .boolean(false), access: .readwrite),
            ExportedProperty("LegacyPairing", value: .boolean(false)),
            ExportedProperty("Connected", value: .boolean(false)),
            ExportedProperty("UUIDs", value: .array(.string, advertisedUUIDs(device, definition).map { .string($0) })),
            ExportedProperty("Adapter", value: .objectPath(adapter)),
            ExportedProperty("ServicesResolved", value: .boolean(false)),
        ]
        if profile.cablePairing { properties.append(ExportedProperty("CablePairing", value: .boolean(false))) }
        if profile.advertisingFlags {
            // Devices known only from storage have no AD Flags until they are seen.
            properties.append(
                optional(
                    "AdvertisingFlags", device.rssi == nil ? nil : Self.advertisingFlags(definition),
                    type: .array(.byte)))
            properties.append(
                optional(
                    "AdvertisingData", device.rssi == nil ? nil : Self.advertisingData(definition),
                    type: .dictionary(key: .byte, value: .variant)))
        }
        properties.append(optional("Name", definition.name.map { .string($0) }, type: .string))
        // Appearance 0 (unknown) is not shown; `Icon` follows the appearance's category.
        let appearance = definition.appearance.flatMap { $0 == 0 ? nil : $0 }
        properties.append(optional("Appearance", appearance.map { .uint16($0) }, type: .uint16))
        properties.append(
            optional("Icon", appearance.flatMap { Self.icon(forAppearance: $0) }.map { .string($0) }, type: .string))
        // Set by the deviceinfo plugin from the peer's PnP ID.
        properties.append(optional("Modalias", nil, type: .string))
        properties.append(optional("RSSI", device.rssi.map { .int16($0) }, type: .int16))
        properties.append(optional("TxPower", device.txPower.map { .int16($0) }, type: .int16))
        properties.append(
            optional(
                "ManufacturerData", device.manufacturerData.isEmpty ? nil : manufacturerValue(device.manufacturerData),
                type: .dictionary(key: .uint16, value: .variant)))
        properties.append(
            optional(
                "ServiceData", device.serviceData.isEmpty ? nil : serviceDataValue(device.serviceData),
                type: .dictionary(key: .string, value: .variant)))
        let methods: [ExportedMethod] = [
            .deferred(BlueZMethod.connect) { [weak self] call, reply in self?.connectCall(call, reply, path) },
            .deferred(BlueZMethod.disconnect) { [weak self] call, reply in self?.disconnectCall(call, reply, path) },
            .deferred(BlueZMethod.pair) { [weak self] call, reply in self?.pairCall(call, reply, path) },
            .deferred(BlueZMethod.cancelPairing) { [weak self] call, reply in
                self?.cancelPairingCall(call, reply, path)
            },
        ]
        let signals = [SignalDescription(try MemberName("Disconnected"), signature: try Signature("ss"))]
        return ExportedInterface(
            BlueZInterface.device1, methods: methods, properties: properties,
            signals: profile.disconnectedSignal ? signals : [])
    }

    /// The AD Flags a peripheral advertises: LE General Discoverable (0x02) when set, and
    /// BR/EDR Not Supported (0x04).
    static func advertisingFlags(_ definition: VirtualPeripheral) -> DBusValue {
        .bytes(Data([definition.discoverable ? 0x06 : 0x04]))
    }

    /// `AdvertisingData` (`a{yv}`): the AD structures bluetoothd passes on, nil when none.
    static func advertisingData(_ definition: VirtualPeripheral) -> DBusValue? {
        let passed = AdvertisingDataTypes.passedOn(definition)
        guard !passed.isEmpty else { return nil }
        return .dictionary(
            key: .byte, value: .variant,
            passed.keys.sorted().map { DBusDictionaryEntry(.byte($0), .variant(.bytes(passed[$0]?.data ?? Data()))) })
    }

    private func optional(_ name: String, _ value: DBusValue?, type: DBusType) -> ExportedProperty {
        guard let value else { return ExportedProperty(name, absentOf: type) }
        return ExportedProperty(name, value: value)
    }

    func manufacturerValue(_ data: [UInt16: Data]) -> DBusValue {
        .dictionary(
            key: .uint16, value: .variant,
            data.keys.sorted().map { DBusDictionaryEntry(.uint16($0), .variant(.bytes(data[$0] ?? Data()))) })
    }

    func serviceDataValue(_ data: [String: Data]) -> DBusValue {
        .dictionary(
            key: .string, value: .variant,
            data.keys.sorted().map { DBusDictionaryEntry(.string($0), .variant(.bytes(data[$0] ?? Data()))) })
    }

    /// Before resolution `UUIDs` lists advertised service UUIDs in advertising order, then
    /// (≥ 5.69) service-data UUIDs (`device_add_eir_uuids`).
    func advertisedUUIDs(_ device: DeviceState, _ definition: VirtualPeripheral) -> [String] {
        if let gatt = device.gatt { return gatt.serviceUUIDs }
        if let stored = device.storedServices { return stored }
        var advertised = definition.serviceUUIDs.compactMap(BlueZUUID.canonical)
        if profile.serviceDataUUIDs { advertised += device.serviceData.keys.sorted() }
        var seen = Set<String>()
        return advertised.filter { seen.insert($0).inserted }
    }

    /// Removes a device object and its GATT subtree, children first, each with its own
    /// `InterfacesRemoved`.
    func removeDevice(_ state: inout SimState, _ path: ObjectPath) {
        guard var device = state.devices.removeValue(forKey: path) else { return }
        abortBonding(&device, BlueZErrorName.authenticationCanceled, BlueZErrorMessage.authenticationCanceled)
        for reply in device.pendingConnects {
            reply.fail(Self.error(BlueZErrorName.failed, BlueZErrorMessage.bredrConnectionCanceled))
        }
        for pending in device.pendingOperations.values { pending.fail(Self.linkLost) }
        for waiting in device.readsInFlight.values.flatMap(\.replies) { waiting.fail(Self.linkLost) }
        for channel in device.acquiredNotify.values { channel.hangUp() }
        for channel in device.acquiredWrite.values { channel.hangUp() }
        unexportGatt(device.gatt)
        connection.unexport(path)
    }

    func unexportGatt(_ gatt: GattLayout?) {
        guard let gatt else { return }
        unexportServices(gatt.services)
    }

    /// Removes services' objects, last first, children before parents.
    func unexportServices(_ services: [GattLayout.Service]) {
        for service in services.reversed() {
            for characteristic in service.characteristics.reversed() {
                for descriptor in characteristic.descriptors.reversed() { connection.unexport(descriptor.path) }
                connection.unexport(characteristic.path)
            }
            connection.unexport(service.path)
        }
    }
}
