import BLE
import Foundation

// What a spec becomes for a PeripheralManager: services whose reads and writes reach the tool
// (so writes can change what is read), static descriptors, and the advertisement.

extension PeripheralSpec {
    /// The services to publish, in order.
    var mutableServices: [MutableService] {
        services.map { service in
            MutableService(
                uuid: service.uuid, isPrimary: service.primary,
                characteristics: service.characteristics.map(\.mutableCharacteristic))
        }
    }

    /// The advertisement to start.
    var advertisementData: Advertisement {
        Advertisement(
            localName: name, serviceUUIDs: advertisement.services, manufacturerData: advertisement.manufacturerData,
            serviceData: advertisement.serviceData, appearance: advertisement.appearance,
            includes: advertisement.includeTxPower ? [.txPower] : [])
    }
}

extension CharacteristicSpec {
    /// Dynamic (no static value): every read and write reaches the tool's value store.
    var mutableCharacteristic: MutableCharacteristic {
        MutableCharacteristic(
            uuid: uuid, properties: characteristicProperties, permissions: permissions, value: nil,
            descriptors: descriptors.map { descriptor in
                descriptor.writable
                    ? MutableDescriptor(uuid: descriptor.uuid, permissions: .readWrite)
                    : MutableDescriptor(uuid: descriptor.uuid, value: descriptor.value)
            })
    }

    var characteristicProperties: CharacteristicProperties {
        var result: CharacteristicProperties = []
        for property in properties {
            switch property {
            case .read, .encryptRead, .encryptAuthenticatedRead: result.insert(.read)
            case .write, .encryptWrite, .encryptAuthenticatedWrite: result.insert(.write)
            case .writeWithoutResponse: result.insert(.writeWithoutResponse)
            case .notify: result.insert(.notify)
            case .indicate: result.insert(.indicate)
            case .broadcast: result.insert(.broadcast)
            case .reliableWrite: result.insert(.reliableWrite)
            }
        }
        return result
    }

    var permissions: AttributePermissions {
        var result: AttributePermissions = .readWrite
        for property in properties {
            switch property {
            case .encryptRead: result.insert(.readEncryptionRequired)
            case .encryptWrite: result.insert(.writeEncryptionRequired)
            case .encryptAuthenticatedRead: result.insert(.readAuthenticationRequired)
            case .encryptAuthenticatedWrite: result.insert(.writeAuthenticationRequired)
            default: break
            }
        }
        return result
    }
}
