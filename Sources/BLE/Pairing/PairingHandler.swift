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
    /// Whether to accept a pairing the peripheral started (Just Works or cable pairing).
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

/// The default handler: no display, no keyboard (`NoInputNoOutput`), so every pairing this
/// process starts is Just Works and BlueZ never asks anything. A peripheral that demands an
/// authenticated key then refuses to pair (``BLEError/Code/authenticationFailed``).
public struct JustWorksPairing: PairingHandler {
    /// `NoInputNoOutput`.
    public var capability: PairingCapability { .noInputNoOutput }

    /// The handler.
    public init() {}
}
