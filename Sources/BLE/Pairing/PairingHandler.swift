/// Answers BlueZ's questions while a peripheral pairs: the passkey to enter, the number to
/// confirm, the passkey to show. Set it in ``CentralOptions/pairingHandler``.
///
/// Each method runs on a task of its own and must answer within
/// ``CentralOptions/pairingAnswerTimeout``; past it, or when BlueZ gives up the request
/// (``cancelled()``), the task is cancelled and BlueZ is told the request was cancelled.
/// Returning `nil` or `false` refuses, which fails the pairing with
/// ``BLEError/Code/authenticationFailed``. Every method but ``capability`` has a default that
/// refuses (or, for the display methods, does nothing).
///
/// Requests reach the handler only from bluetoothd: any other client on the bus that calls the
/// agent is refused by the bus connection before the handler could see it.
///
/// ## Pairings the peripheral starts
///
/// Many sensors ask for security themselves (an SMP Security Request right after connecting, or
/// an Insufficient Authentication answer): Linux then pairs without ``Peripheral/pair(timeout:)``
/// and bluetoothd asks its *default* agent, the first one registered. The central registers its
/// agent before its first connection, so on a system with no other agent (a gateway, a
/// container) these questions reach this handler too, and ``Peripheral/isPaired`` and
/// ``ConnectionEvent/pairingChanged(isPaired:)`` follow the result. Where a desktop agent
/// registered first, that agent is asked instead.
///
/// BlueZ does not say who started a pairing, so the passkey and confirmation questions look the
/// same either way. One exception: ``authorize(_:)`` is asked only for a Just Works pairing that
/// no `Pair` call started (BlueZ accepts Just Works by itself under ``Peripheral/pair(timeout:)``).
public protocol PairingHandler: Sendable {
    /// What this device can show and type.
    var capability: PairingCapability { get }
    /// The passkey the peripheral shows, as the user types it (passkey entry), 0–999999;
    /// `nil` refuses.
    func passkey(for peripheral: PeripheralID) async -> UInt32?
    /// Shows `passkey` for the user to type on the peripheral; `entered` counts the keys typed
    /// so far, when the peripheral reports them (BlueZ may call again as it changes).
    func display(passkey: UInt32, entered: UInt16, for peripheral: PeripheralID) async
    /// Whether `passkey` is the number the peripheral shows (numeric comparison).
    func confirm(passkey: UInt32, for peripheral: PeripheralID) async -> Bool
    /// Whether to accept a Just Works pairing the peripheral started (its Security Request, or
    /// a read or write it refused for want of encryption), or a cable pairing. Never asked for
    /// a pairing ``Peripheral/pair(timeout:)`` started.
    func authorize(_ peripheral: PeripheralID) async -> Bool
    /// Whether `peripheral` may connect to this device's `service` (BR/EDR profiles).
    func authorizeService(_ service: BluetoothUUID, for peripheral: PeripheralID) async -> Bool
    /// A legacy PIN code, 1–16 characters (BR/EDR only); `nil` refuses.
    func pinCode(for peripheral: PeripheralID) async -> String?
    /// Shows a legacy PIN code for the user to type on the peripheral (BR/EDR only).
    func display(pinCode: String, for peripheral: PeripheralID) async
    /// BlueZ gave up the request in progress (timeout, or the pairing was cancelled).
    func cancelled()
}

extension PairingHandler {
    /// Refuses.
    public func passkey(for peripheral: PeripheralID) async -> UInt32? { nil }
    /// Shows nothing.
    public func display(passkey: UInt32, entered: UInt16, for peripheral: PeripheralID) async {}
    /// Refuses.
    public func confirm(passkey: UInt32, for peripheral: PeripheralID) async -> Bool { false }
    /// Refuses.
    public func authorize(_ peripheral: PeripheralID) async -> Bool { false }
    /// Refuses.
    public func authorizeService(_ service: BluetoothUUID, for peripheral: PeripheralID) async -> Bool { false }
    /// Refuses.
    public func pinCode(for peripheral: PeripheralID) async -> String? { nil }
    /// Shows nothing.
    public func display(pinCode: String, for peripheral: PeripheralID) async {}
    /// Does nothing.
    public func cancelled() {}
}

/// The default handler: no display, no keyboard (`NoInputNoOutput`), so every pairing is Just
/// Works. BlueZ asks nothing for one this process starts, and asks ``authorize(_:)`` for one a
/// peripheral starts, which this handler accepts. A peripheral that demands an authenticated
/// key then fails to pair (``BLEError/Code/authenticationFailed`` from
/// ``Peripheral/pair(timeout:)``; no bond when it asked by itself).
public struct JustWorksPairing: PairingHandler {
    /// `NoInputNoOutput`.
    public var capability: PairingCapability { .noInputNoOutput }

    /// Accepts: Just Works is what this handler is for, whoever starts it.
    public func authorize(_ peripheral: PeripheralID) async -> Bool { true }

    /// The handler.
    public init() {}
}
