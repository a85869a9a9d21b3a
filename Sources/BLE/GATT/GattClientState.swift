import DBus
import Foundation

/// A peripheral's GATT bookkeeping that stays on the peripheral actor.
struct GattClientState {
    /// Characteristic objects handed out, by path (weak: the app owns them).
    var characteristics: [ObjectPath: WeakCharacteristic] = [:]
    /// The device's services as last decoded (see ``GattLayout``).
    var layout: GattLayout?
    // The operation order, read echoes and notification subscribers are the GATT client's
    // (``GattClient``), which the I/O thread reaches without the actor.
    /// StartNotify/StopNotify per characteristic, shared by its subscribers.
    var sessions: [ObjectPath: NotifySession] = [:]
    /// AcquireNotify calls in flight, which concurrent subscribers share.
    var attaching: [ObjectPath: SharedAttempt<Void>] = [:]
    /// AcquireNotify channels (the opt-in fast path), by characteristic.
    var acquired: [ObjectPath: AcquiredNotifyChannel] = [:]
}

/// A weak reference, so the peripheral's cache does not keep characteristics alive.
struct WeakCharacteristic {
    weak var value: Characteristic?
}

/// A subscriber waiting for StartNotify to be confirmed.
typealias NotifyWaiter = CheckedContinuation<Result<Void, BLEError>, Never>

/// A characteristic's notifications, shared by its subscribers (see ``SharedSession``).
typealias NotifySession = SharedSession<NotifyWaiter>
