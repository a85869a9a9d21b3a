import BlueZ
import Foundation

extension PeripheralRecord {
    /// Where a value lives, by meaning rather than position: the service UUID and which
    /// service of that UUID it is, the characteristic UUID and which of that UUID in the
    /// service, and for a descriptor its UUID and occurrence.
    private struct Identity: Hashable {
        var service: String
        var serviceOccurrence: Int
        var characteristic: String
        var characteristicOccurrence: Int
        var descriptor: String?
        var descriptorOccurrence = 0
    }

    /// Every value key of `definition` with its identity and initial value.
    private static func identities(_ definition: VirtualPeripheral) -> [(Identity, ValueKey, Data)] {
        var result: [(Identity, ValueKey, Data)] = []
        var serviceSeen: [String: Int] = [:]
        for (s, service) in definition.servedServices {
            let serviceUUID = BlueZUUID.canonical(service.uuid) ?? service.uuid
            let serviceOccurrence = serviceSeen[serviceUUID, default: 0]
            serviceSeen[serviceUUID] = serviceOccurrence + 1
            var characteristicSeen: [String: Int] = [:]
            for (c, characteristic) in service.characteristics.enumerated() {
                let uuid = BlueZUUID.canonical(characteristic.uuid) ?? characteristic.uuid
                let occurrence = characteristicSeen[uuid, default: 0]
                characteristicSeen[uuid] = occurrence + 1
                let identity = Identity(
                    service: serviceUUID, serviceOccurrence: serviceOccurrence, characteristic: uuid,
                    characteristicOccurrence: occurrence)
                result.append((identity, ValueKey(service: s, characteristic: c), characteristic.value.data))
                var descriptorSeen: [String: Int] = [:]
                for (d, descriptor) in characteristic.descriptors.enumerated() {
                    let descriptorUUID = BlueZUUID.canonical(descriptor.uuid) ?? descriptor.uuid
                    var descriptorIdentity = identity
                    descriptorIdentity.descriptor = descriptorUUID
                    descriptorIdentity.descriptorOccurrence = descriptorSeen[descriptorUUID, default: 0]
                    descriptorSeen[descriptorUUID] = descriptorIdentity.descriptorOccurrence + 1
                    result.append(
                        (
                            descriptorIdentity, ValueKey(service: s, characteristic: c, descriptor: d),
                            descriptor.value.data
                        ))
                }
            }
        }
        return result
    }

    /// The record for a new description of the same peripheral. Values follow their
    /// characteristic (or descriptor) by UUID, wherever it moved; an attribute whose initial
    /// `value` changed, or that is new, starts from the new initial value.
    func updated(to definition: VirtualPeripheral) -> PeripheralRecord {
        var old: [Identity: (key: ValueKey, initial: Data)] = [:]
        for (identity, key, initial) in Self.identities(self.definition) { old[identity] = (key, initial) }
        var record = self
        record.definition = definition
        record.values = [:]
        record.notifyCursor = [:]
        for (identity, key, initial) in Self.identities(definition) {
            guard let previous = old[identity], previous.initial == initial else {
                record.values[key] = initial
                continue
            }
            record.values[key] = values[previous.key] ?? initial
            if let cursor = notifyCursor[previous.key] { record.notifyCursor[key] = cursor }
        }
        return record
    }
}
