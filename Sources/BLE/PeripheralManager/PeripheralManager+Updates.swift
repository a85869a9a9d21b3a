import BlueZ
import DBus
import Foundation

extension PeripheralManager {
    /// Sends a notification or indication of a characteristic to its subscribed centrals, as
    /// Core Bluetooth's `updateValue(_:for:onSubscribedCentrals:)`, waiting while the notify
    /// channel is full (back-pressure) up to `timeout` (``PeripheralManagerOptions/callTimeout``).
    ///
    /// BlueZ notes: bluetoothd sends each value to **every** subscribed central; there is no
    /// per-central send. `centrals` is therefore a check, not a filter: each listed central
    /// must be one BlueZ named as subscribed (the central that opened the notify channel),
    /// else ``BLEError/Code/notFound``. Without a notify channel (StartNotify, or
    /// ``PeripheralManagerOptions/acquireNotify`` off) values go out as `PropertiesChanged(Value)`
    /// with no back-pressure, and bluetoothd truncates them to each central's MTU − 3.
    ///
    /// - Throws: ``BLEError/Code/invalidArguments`` for a value longer than the channel's
    ///   MTU − 3 (or 512 bytes); ``BLEError/Code/notFound`` for an unknown characteristic;
    ///   ``BLEError/Code/notSupported`` for one that does not notify or indicate;
    ///   ``BLEError/Code/timeout``; ``BLEError/Code/cancelled``.
    public func updateValue(
        _ value: Data, for characteristic: BluetoothUUID, in service: BluetoothUUID? = nil,
        onSubscribedCentrals centrals: [CentralID]? = nil, timeout: Duration? = nil
    ) async throws(BLEError) {
        let path = try notifyingPath(characteristic, in: service, centrals: centrals)
        if centrals?.isEmpty == true { return }
        guard let channel = core.state.withLock({ $0.notify[path]?.channel }) else {
            return try sendAsSignal(value, at: path)
        }
        try checkLength(value, channel)
        let sent = try await withDeadline(
            timeout ?? options.callTimeout, what: "updating \(characteristic)", timedBy: session.connection
        ) {
            () throws(BLEError) -> Bool in
            while true {
                switch channel.trySend(value) {
                case .sent: return true
                case .closed: return false
                case .full: await channel.waitUntilWritable()
                }
                if Task.isCancelled { throw BLEError.cancelledByTask }
            }
        }
        // The last central left meanwhile: the value goes where bluetoothd sends it now.
        if !sent { try sendAsSignal(value, at: path) }
    }

    /// Sends without waiting, as Core Bluetooth's `updateValue` returning `false`: when the
    /// notify channel is full the value is not sent, false is returned, and
    /// ``PeripheralManagerEvent/readyToUpdate`` follows once there is room again.
    ///
    /// - Throws: as ``updateValue(_:for:in:onSubscribedCentrals:timeout:)``, never `timeout`.
    public func tryUpdateValue(
        _ value: Data, for characteristic: BluetoothUUID, in service: BluetoothUUID? = nil,
        onSubscribedCentrals centrals: [CentralID]? = nil
    ) throws(BLEError) -> Bool {
        let path = try notifyingPath(characteristic, in: service, centrals: centrals)
        if centrals?.isEmpty == true { return true }
        guard let channel = core.state.withLock({ $0.notify[path]?.channel }) else {
            try sendAsSignal(value, at: path)
            return true
        }
        try checkLength(value, channel)
        switch channel.trySend(value) {
        case .sent:
            return true
        case .full:
            channel.whenWritable { [eventBroadcast] in eventBroadcast.yield(.readyToUpdate) }
            return false
        case .closed:
            try sendAsSignal(value, at: path)
            return true
        }
    }

    /// Whether a central is subscribed to the characteristic, as far as bluetoothd said.
    public func isNotifying(_ characteristic: BluetoothUUID, in service: BluetoothUUID? = nil) -> Bool {
        guard let path = try? notifyingPath(characteristic, in: service, centrals: nil) else { return false }
        return core.state.withLock { $0.notify[path]?.notifying ?? false }
    }

    private func notifyingPath(
        _ characteristic: BluetoothUUID, in service: BluetoothUUID?, centrals: [CentralID]?
    ) throws(BLEError) -> ObjectPath {
        var found: (ObjectPath, MutableCharacteristic)?
        for published in services where service == nil || published.service.uuid == service {
            if let index = published.service.characteristics.firstIndex(where: { $0.uuid == characteristic }) {
                found = (published.characteristicPath(index), published.service.characteristics[index])
                break
            }
        }
        guard let (path, published) = found else {
            throw BLEError(.notFound, message: "characteristic \(characteristic) is not published")
        }
        guard published.notifies else {
            throw BLEError(.notSupported, message: "characteristic \(characteristic) neither notifies nor indicates")
        }
        if let centrals {
            let subscribed = core.state.withLock { $0.notify[path]?.channel?.central }
            for central in centrals where central != subscribed {
                throw BLEError(.notFound, message: "central \(central) is not known to be subscribed")
            }
        }
        return path
    }

    private func checkLength(_ value: Data, _ channel: NotifyChannel) throws(BLEError) {
        guard value.count <= channel.maximumValueLength else {
            throw BLEError(
                .invalidArguments,
                message: "\(value.count) bytes exceed the \(channel.maximumValueLength)-byte notification limit")
        }
    }

    /// `PropertiesChanged(Value)`: bluetoothd notifies every subscribed central.
    private func sendAsSignal(_ value: Data, at path: ObjectPath) throws(BLEError) {
        try ServiceValidation.validLength(value)
        do throws(DBusError) {
            try session.connection.setProperty(
                "Value", to: .bytes(value), interface: BlueZInterface.gattCharacteristic1, path: path)
        } catch {
            throw BLEError(error)
        }
    }
}
