import BlueZ
import DBus
import Foundation

/// Two controllers of one machine talking to each other, as two real bluetoothd adapters in
/// radio range do: what applications registered on adapter A (advertisements and GATT
/// services) is a peripheral, at A's address, for every other adapter. Its advertising
/// reaches their discoveries; a central connected from adapter B has its reads, writes and
/// CCC writes forwarded to A's applications exactly as ``Simulator/remoteRead(characteristic:central:offset:mtu:)``
/// and its siblings forward a simulated remote central's, with B's address as the central;
/// and what the applications notify or indicate reaches B's device object.
///
/// The peripheral is a ``PeripheralRecord`` with ``PeripheralRecord/servedBy`` set, kept in
/// step with the registrations by ``refreshBridge(_:adapter:)``. Its attributes are the
/// registered ones in registration and handle order, so a ``ValueKey`` names the same
/// attribute on both sides (``bridgedTarget(_:_:_:)``).
extension Daemon {
    /// The ATT MTU two BlueZ stacks agree on (both offer 517).
    static let bridgeMTU: UInt16 = 517

    // MARK: The peripheral an adapter's registrations make

    /// Brings the peripheral adapter `index` shows the others in line with its registrations:
    /// created by the first registration, advertising while an advertisement is registered,
    /// its GATT database the registered services (connected centrals hear of a change through
    /// Service Changed, as from any peer). A virtual peripheral given the adapter's address
    /// keeps it.
    func refreshBridge(_ state: inout SimState, adapter index: Int) {
        guard state.adapters.indices.contains(index) else { return }
        let address = state.adapters[index].address
        let existing = state.peripherals[address]
        if let existing, existing.servedBy != index { return }
        let advertisements = state.server.advertisements.values.filter { $0.advertisement.adapter == index }
            .sorted { $0.order < $1.order }.map(\.advertisement)
        let services = bridgedServices(state, adapter: index).map { $0.service }
        if existing == nil && advertisements.isEmpty && services.isEmpty { return }
        let definition = Self.bridgeDefinition(address, advertisements, services)
        guard var record = existing else {
            var record = PeripheralRecord(definition)
            record.servedBy = index
            state.peripherals[address] = record
            state.scheduleAdvertising(address, now: MonotonicNanos.now())
            return
        }
        let before = record.definition
        guard before != definition else { return }
        record = record.updated(to: definition)
        state.peripherals[address] = record
        if definition.advertising && !before.advertising {
            state.scheduleAdvertising(address, now: MonotonicNanos.now())
        }
        if definition.services != before.services {
            for path in state.devices.keys.sorted() where state.devices[path]?.address == address {
                servicesChanged(&state, path)
            }
        }
    }

    /// Every adapter's bridge, after registrations went on several at once.
    func refreshBridges(_ state: inout SimState) {
        for index in state.adapters.indices { refreshBridge(&state, adapter: index) }
    }

    /// What the adapter's registrations look like from another adapter: the advertisements'
    /// data merged (the controller sends them in turn) with their scan responses (an active
    /// scanner asks for them, and bluetoothd merges them into the device), the registered services.
    private static func bridgeDefinition(
        _ address: BluetoothAddress, _ advertisements: [RegisteredAdvertisement], _ services: [VirtualService]
    ) -> VirtualPeripheral {
        var peripheral = VirtualPeripheral(
            address: address.description, name: advertisements.lazy.compactMap(\.localName).first, services: services)
        var uuids: [String] = []
        for uuid in advertisements.flatMap({ $0.serviceUUIDs + $0.scanResponseServiceUUIDs }) {
            let canonical = BlueZUUID.canonical(uuid) ?? uuid.lowercased()
            if !uuids.contains(canonical) { uuids.append(canonical) }
        }
        peripheral.serviceUUIDs = uuids
        for advertisement in advertisements {
            for (company, data) in advertisement.manufacturerData {
                peripheral.manufacturerData[company] = HexData(data)
            }
            for (uuid, data) in advertisement.serviceData { peripheral.serviceData[uuid] = HexData(data) }
            for (company, data) in advertisement.scanResponseManufacturerData {
                peripheral.manufacturerData[company] = HexData(data)
            }
            for (uuid, data) in advertisement.scanResponseServiceData { peripheral.serviceData[uuid] = HexData(data) }
            for (type, data) in advertisement.data.merging(advertisement.scanResponseData, uniquingKeysWith: { $1 }) {
                peripheral.advertisingData[type] = HexData(data)
            }
        }
        peripheral.appearance = advertisements.lazy.compactMap(\.appearance).first
        peripheral.txPower = advertisements.lazy.compactMap(\.txPower).first
        peripheral.advertising = !advertisements.isEmpty
        peripheral.connectable = advertisements.isEmpty || advertisements.contains { $0.type == .peripheral }
        peripheral.discoverable = advertisements.contains { $0.discoverable }
        peripheral.mtu = bridgeMTU
        return peripheral
    }

    /// The services registered on an adapter, in registration and handle order, each with
    /// its application and its description as a peer's service.
    private func bridgedServices(_ state: SimState, adapter index: Int) -> [(
        key: RegistrationKey, registered: RegisteredService, service: VirtualService
    )] {
        let applications = state.server.generation == state.generation ? state.server.orderedApplications : []
        var result: [(key: RegistrationKey, registered: RegisteredService, service: VirtualService)] = []
        for (key, record) in applications where key.adapter == index {
            let byPath = Dictionary(
                record.application.services.map { ($0.path, $0.uuid) }, uniquingKeysWith: { first, _ in first })
            for service in record.application.services {
                let characteristics = service.characteristics.map { characteristic in
                    VirtualCharacteristic(
                        uuid: characteristic.uuid, flags: characteristic.flags,
                        descriptors: characteristic.descriptors.map { descriptor in
                            VirtualDescriptor(uuid: descriptor.uuid, writable: descriptor.isWritable)
                        })
                }
                let peer = VirtualService(
                    uuid: service.uuid, primary: service.primary, includes: service.includes.compactMap { byPath[$0] },
                    characteristics: characteristics)
                result.append((key, service, peer))
            }
        }
        return result
    }

    /// The registered attribute a GATT call on a bridged peripheral's object stands for, or
    /// nil when the peripheral is a virtual one (or the call is for a CCC, which bluetoothd
    /// answers itself).
    func bridgedTarget(_ state: SimState, _ record: PeripheralRecord, _ target: GattTarget) -> ServerTarget? {
        guard let index = record.servedBy, !target.isCCC, state.adapters.indices.contains(index) else { return nil }
        let services = bridgedServices(state, adapter: index)
        guard services.indices.contains(target.key.service) else { return nil }
        let (key, service, _) = services[target.key.service]
        guard service.characteristics.indices.contains(target.key.characteristic) else { return nil }
        let characteristic = service.characteristics[target.key.characteristic]
        var server = ServerTarget(key: key, adapterPath: state.adapters[index].path, characteristic: characteristic)
        if target.isDescriptor {
            guard characteristic.descriptors.indices.contains(target.key.descriptor) else { return nil }
            server.descriptor = characteristic.descriptors[target.key.descriptor]
        }
        return server
    }

    /// The address a device's adapter has: the central, to the peripheral's applications.
    func centralAddress(_ state: SimState, _ device: DeviceState) -> String {
        state.adapters[device.adapterIndex].address.description
    }
}
