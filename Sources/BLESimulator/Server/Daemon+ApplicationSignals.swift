import BlueZ
import DBus
import Foundation
import Glibc

extension Daemon {
    /// A signal from a registered application: a characteristic's `PropertiesChanged(Value)`
    /// is a notification or indication to every subscribed remote central; an
    /// `InterfacesRemoved` for a service object unregisters that service (§5.2, §5.4).
    func applicationSignal(_ message: DBusMessage, _ key: RegistrationKey) {
        guard let path = message.path else { return }
        switch (message.interface, message.member) {
        case (InterfaceName.properties?, BlueZSignal.propertiesChanged?):
            guard let value = Self.changedValue(message) else { return }
            core.state.withLock { state in
                guard isCurrent(state) else { return }
                deliverNotification(&state, key, characteristic: path, value, viaSocket: false)
            }
        case (InterfaceName.objectManager?, BlueZSignal.interfacesRemoved?):
            guard message.body.count == 2, case .objectPath(let object) = message.body[0],
                case .array(.string, let names) = message.body[1],
                names.contains(.string(BlueZInterface.gattService1.rawValue))
            else { return }
            core.state.withLock { state in
                guard isCurrent(state) else { return }
                removeService(&state, key, object)
            }
        default:
            return
        }
    }

    /// The new `Value` of a characteristic's `PropertiesChanged`: the changed value, or an
    /// empty payload when `Value` is invalidated; `nil` when `Value` is not part of it.
    private static func changedValue(_ message: DBusMessage) -> Data? {
        guard message.body.count == 3, case .string(let interface) = message.body[0],
            interface == BlueZInterface.gattCharacteristic1.rawValue,
            case .dictionary(_, _, let changed) = message.body[1]
        else { return nil }
        for entry in changed where entry.key == .string("Value") {
            guard case .bytes(let value) = entry.value.unwrappingVariant else { return nil }
            return value
        }
        if case .array(.string, let invalidated) = message.body[2], invalidated.contains(.string("Value")) {
            return Data()
        }
        return nil
    }

    /// Drops one service of a registered application, with its subscriptions and sockets.
    func removeService(_ state: inout SimState, _ key: RegistrationKey, _ path: ObjectPath) {
        guard var record = state.server.applications[key],
            let index = record.application.services.firstIndex(where: { $0.path == path })
        else { return }
        let service = record.application.services.remove(at: index)
        for characteristic in service.characteristics {
            record.subscriptions[characteristic.path] = nil
            if let socket = record.notifySockets.removeValue(forKey: characteristic.path) {
                _ = Glibc.shutdown(socket.rawValue, Int32(SHUT_RDWR))
            }
            record.writeSockets.removeValue(forKey: characteristic.path)?.close()
        }
        state.server.applications[key] = record
        refreshBridge(&state, adapter: key.adapter)
    }
}
