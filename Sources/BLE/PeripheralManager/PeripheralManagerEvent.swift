/// What happens to a ``PeripheralManager`` besides requests, as the `CBPeripheralManagerDelegate`
/// callbacks that are not requests.
public enum PeripheralManagerEvent: Sendable {
    /// A central enabled notifications or indications of a characteristic. BlueZ names the
    /// central only when it opens a notify channel (`AcquireNotify`); `StartNotify` carries
    /// no device, so `central` is nil then.
    case subscribed(characteristic: BluetoothUUID, central: CentralID?)
    /// The last subscribed central left (disabled notifications or disconnected): bluetoothd
    /// calls `StopNotify` or closes the notify channel only then. `central` is the one that
    /// opened the channel, when known.
    case unsubscribed(characteristic: BluetoothUUID, central: CentralID?)
    /// A full notify channel has room again: Core Bluetooth's `peripheralManagerIsReady`.
    /// Sent once after each ``PeripheralManager/tryUpdateValue(_:for:in:onSubscribedCentrals:)``
    /// that returned false.
    case readyToUpdate
    /// A central confirmed an indication of a characteristic.
    case indicationConfirmed(characteristic: BluetoothUUID)
    /// bluetoothd ended the advertisement of ``PeripheralManager/startAdvertising(_:)`` (its
    /// `Timeout` expired, or the adapter went away).
    case advertisingStopped
    /// bluetoothd ended an advertisement of ``PeripheralManager/addAdvertisement(_:)``.
    case advertisementStopped(AdvertisementHandle)
    /// bluetoothd restarted and forgot the registrations; the manager registered its services
    /// and advertisement again.
    case republished
    /// Registering again after a bluetoothd restart failed; the services are not published.
    case republishFailed(BLEError)
}
