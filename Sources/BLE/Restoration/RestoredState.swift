/// What a central with a ``CentralOptions/restoreIdentifier`` took over from the previous
/// process that used the identifier (Core Bluetooth's `willRestoreState`).
///
/// ```swift
/// var options = CentralOptions()
/// options.restoreIdentifier = "hr-gateway"
/// let central = try await Central(options: options)
/// if let restored = await central.restoredState {
///     for characteristic in restored.subscriptions {
///         Task { for await value in characteristic.notifications { handle(value) } }
///     }
/// }
/// ```
public struct RestoredState: Sendable {
    /// The peripherals connected through this identifier and not disconnected by the app: the
    /// links bluetoothd still holds are taken up, the others are being reconnected with their
    /// reconnect policy (their ``Peripheral/events`` tell how that goes), and their
    /// subscriptions are made again once they are back.
    public let peripherals: [Peripheral]
    /// The characteristics that had a notification iteration when the previous process ended,
    /// on the links that were still up, subscribed again (StartNotify): values notified since
    /// are kept for the first iteration of each one's ``Characteristic/notifications``, as
    /// ``Characteristic/subscribe()`` keeps them. A characteristic that is gone (the
    /// peripheral's services changed) is left out, and the reason logged.
    public let subscriptions: [Characteristic]
    /// The services a scan was looking for when the previous process ended (empty: every
    /// advertiser), nil when none ran. The scan is not started again: the app decides.
    public let scanServices: [BluetoothUUID]?
    /// The services a passive scan (``ScanOptions/passive``) was looking for when the previous
    /// process ended, nil when none ran. Not started again either.
    public let passiveScanServices: [BluetoothUUID]?
}
