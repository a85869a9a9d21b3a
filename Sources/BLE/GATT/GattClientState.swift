import DBus
import Foundation

/// A peripheral's GATT client bookkeeping, kept on the peripheral actor.
struct GattClientState {
    /// Characteristic objects handed out, by path (weak: the app owns them).
    var characteristics: [ObjectPath: WeakCharacteristic] = [:]
    /// Paths that became invalid when the services changed.
    var stalePaths: Set<ObjectPath> = []
    /// One operation at a time per peripheral: BlueZ answers InProgress otherwise.
    var queueBusy = false
    var queue: [CheckedContinuation<Void, Never>] = []
    /// Operations waiting for a reply, failed all at once when the link drops.
    var pending: [UInt64: @Sendable (BLEError) -> Void] = [:]
    var nextOperation: UInt64 = 1
    /// The characteristic being read, whose `Value` signals are held until the read ends so
    /// its echo can be told from notifications.
    var readInFlight: ObjectPath?
    var heldValues: [(serial: UInt32, value: Data)] = []
    /// A read's echo not yet seen: dropped when it arrives.
    /// (the serial of the read's reply, the value), oldest first: several reads may have
    /// been answered before their echoes were seen.
    var expectedEchoes: [ObjectPath: [(serial: UInt32, value: Data)]] = [:]
    /// Notification iterations per characteristic.
    var subscribers: [ObjectPath: [UInt64: NotificationSubscriber]] = [:]
    /// Characteristics BlueZ confirmed StartNotify for.
    var notifying: Set<ObjectPath> = []
    /// AcquireNotify channels (the opt-in fast path), by characteristic.
    var acquired: [ObjectPath: AcquiredNotifyChannel] = [:]
}

/// A weak reference, so the peripheral's cache does not keep characteristics alive.
struct WeakCharacteristic {
    weak var value: Characteristic?
}
