import BlueZ
import DBus

/// What a remote central's request acts on: a characteristic, or one of its descriptors, of
/// a registered application.
struct ServerTarget: Sendable {
    var key: RegistrationKey
    /// The adapter the application is registered on; the central's device path lies below it.
    var adapterPath: ObjectPath
    var characteristic: RegisteredCharacteristic
    var descriptor: RegisteredDescriptor?

    /// The object the call goes to.
    var path: ObjectPath { descriptor?.path ?? characteristic.path }
    /// The interface of that object.
    var interface: InterfaceName {
        descriptor == nil ? BlueZInterface.gattCharacteristic1 : BlueZInterface.gattDescriptor1
    }
}

extension Daemon {
    /// The first registered characteristic with `uuid` (in registration and handle order), or
    /// its descriptor with `descriptor` when given.
    func serverTarget(characteristic uuid: String, descriptor: String? = nil) throws(RemoteCentralError) -> ServerTarget
    {
        try core.state.withLock { (state: inout SimState) throws(RemoteCentralError) -> ServerTarget in
            guard isCurrent(state) else { throw RemoteCentralError.notRunning }
            state.server.adopt(generation: generation)
            for (key, record) in state.server.orderedApplications where state.adapters.indices.contains(key.adapter) {
                let adapterPath = state.adapters[key.adapter].path
                for service in record.application.services {
                    for characteristic in service.characteristics where BlueZUUIDMatch.same(characteristic.uuid, uuid) {
                        guard let descriptor else {
                            return ServerTarget(key: key, adapterPath: adapterPath, characteristic: characteristic)
                        }
                        if let found = characteristic.descriptors.first(where: {
                            BlueZUUIDMatch.same($0.uuid, descriptor)
                        }) {
                            return ServerTarget(
                                key: key, adapterPath: adapterPath, characteristic: characteristic, descriptor: found)
                        }
                    }
                }
            }
            let what = descriptor.map { "descriptor \($0) of characteristic \(uuid)" } ?? "characteristic \(uuid)"
            throw RemoteCentralError(.notFound, message: "no registered application has \(what)")
        }
    }
}
