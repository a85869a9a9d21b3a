import DBus
import Foundation
import Synchronization

/// A characteristic of a connected peripheral, as Core Bluetooth's `CBCharacteristic` plus the
/// operations `CBPeripheral` performs on it.
///
/// ```swift
/// let hr = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
/// for await value in hr.notifications { … }
/// ```
///
/// Operations are ordered per peripheral, have deadlines, honour task cancellation, and fail
/// with ``BLEError/Code/disconnected`` at once when the link drops. The object stays valid
/// across reconnections until BlueZ reports the peripheral's services changed.
public actor Characteristic {
    /// The characteristic UUID.
    public nonisolated let uuid: BluetoothUUID
    /// The UUID of its service.
    public nonisolated let serviceUUID: BluetoothUUID
    /// What it supports.
    public nonisolated let properties: CharacteristicProperties
    /// Its declaration handle, when known.
    public nonisolated let handle: UInt16?
    /// Its descriptors, as discovered.
    public nonisolated let descriptors: [Descriptor]
    /// The peripheral it belongs to.
    public nonisolated let peripheral: Peripheral
    nonisolated let path: ObjectPath
    /// False for good once BlueZ removed the characteristic (services changed).
    nonisolated let validity = HandleValidity()
    /// A subscription made again by state restoration, until an iteration takes it.
    nonisolated let restoredIteration = PosixMutex<NotificationSequence?>(nil)

    /// The actor runs where the bus connection does its I/O.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { peripheral.unownedExecutor }

    init(
        uuid: BluetoothUUID, serviceUUID: BluetoothUUID, properties: CharacteristicProperties, handle: UInt16?,
        descriptors: [Descriptor], peripheral: Peripheral, path: ObjectPath
    ) {
        self.uuid = uuid
        self.serviceUUID = serviceUUID
        self.properties = properties
        self.handle = handle
        self.descriptors = descriptors
        self.peripheral = peripheral
        self.path = path
    }

    /// Reads the value (from `offset`, for long values read in parts).
    ///
    /// Runs on the caller's executor (no hop onto the actor): the caller suspends once, and
    /// bluetoothd's reply resumes it. On the bus connection's executor (``Central/executor``)
    /// an operation costs no thread switch at all.
    public nonisolated(nonsending) func read(offset: UInt16 = 0, timeout: Duration? = nil) async throws(BLEError)
        -> Data
    {
        try validity.check()
        return try await peripheral.readValue(path, offset: offset, timeout: timeout)
    }

    /// Writes a value. `.withResponse` lets BlueZ do a long write for values beyond one packet;
    /// `.withoutResponse` refuses (``BLEError/Code/invalidArguments``) values longer than
    /// ``Peripheral/maximumWriteLength(for:)``: it never truncates or splits silently.
    public nonisolated(nonsending) func write(_ value: Data, type: WriteType = .withResponse, timeout: Duration? = nil)
        async throws(BLEError)
    {
        try validity.check()
        try await peripheral.writeValue(path, value, type: type, timeout: timeout)
    }

    /// Notifications and indications: the first iteration subscribes (StartNotify), the last
    /// one leaving unsubscribes. Each iteration gets every value, empty ones included; read
    /// results are not delivered as notifications. Buffering is per iteration
    /// (``CentralOptions/notificationBufferSize``); values beyond it are dropped and counted.
    /// Ends when subscribing fails or the peripheral's services change; see ``subscribe()``
    /// to learn why.
    public nonisolated var notifications: NotificationSequence {
        // A restored subscription's values wait here for the first iteration (``RestoredState``).
        if let kept = restoredIteration.withLock({ $0.take() }) { return kept }
        return NotificationSequence(peripheral: peripheral, path: path, validity: validity)
    }

    /// Hands `sequence` (subscribed again by state restoration) to the next ``notifications``.
    nonisolated func keepRestoredIteration(_ sequence: NotificationSequence) {
        restoredIteration.withLock { $0 = sequence }
    }

    /// The same notifications over BlueZ's AcquireNotify socket (opt-in fast path): one
    /// datagram per notification, no D-Bus signal per value, no read echo. Needs the
    /// characteristic's `notify` flag (BlueZ 5.66) and cannot be combined with
    /// ``notifications`` on the same characteristic (BlueZ refuses one while the other runs).
    public nonisolated var acquiredNotifications: NotificationSequence {
        var sequence = NotificationSequence(peripheral: peripheral, path: path, validity: validity)
        sequence.acquired = true
        return sequence
    }

    /// Whether notifications reach this app now (Core Bluetooth's `isNotifying`): from BlueZ's
    /// confirmation of the first subscription (``subscribe()`` or an iteration of
    /// ``notifications`` or ``acquiredNotifications``) until the last one ends, and only while
    /// the link is up (BlueZ arms the subscription again at the next link, quirk Q7).
    public var isNotifying: Bool {
        get async { await peripheral.isNotifying(path) }
    }

    /// The newest value read (``read(offset:timeout:)``) or notified (``notifications``,
    /// ``acquiredNotifications``), as Core Bluetooth's `value`; `nil` until there is one.
    /// Writes leave it as it is; it survives link loss. Reads of descriptors do not count.
    public nonisolated var lastValue: Data? { peripheral.client.lastValue(path) }

    /// Subscribes now and returns the notifications once BlueZ confirmed the subscription;
    /// throws when it cannot. Values notified from then on are kept for the first iteration
    /// of the returned sequence, even if it starts later.
    public func subscribe() async throws(BLEError) -> NotificationSequence {
        try validity.check()
        let counters = NotificationCounters()
        let (consumer, subscriber) = NotificationSequence.makeIteration(peripheral: peripheral, counters: counters)
        NotificationSequence.unsubscribeOnTermination(subscriber, peripheral: peripheral, path: path)
        try await peripheral.addSubscriber(subscriber, to: path)
        return NotificationSequence(
            peripheral: peripheral, path: path, validity: validity, counters: counters,
            prepared: PreparedIteration(consumer: consumer, subscriber: subscriber))
    }

    /// Reads a descriptor.
    public nonisolated(nonsending) func read(_ descriptor: Descriptor, timeout: Duration? = nil) async throws(BLEError)
        -> Data
    {
        try validity.check()
        return try await peripheral.readValue(descriptor.path, offset: 0, timeout: timeout, descriptor: true)
    }

    /// Writes a descriptor (not the CCC 0x2902, which BlueZ manages: use ``notifications``).
    public nonisolated(nonsending) func write(_ value: Data, to descriptor: Descriptor, timeout: Duration? = nil)
        async throws(BLEError)
    {
        try validity.check()
        try await peripheral.writeValue(descriptor.path, value, type: .withResponse, timeout: timeout, descriptor: true)
    }
}

/// Whether a handed-out ``Characteristic`` still denotes what BlueZ has.
final class HandleValidity: Sendable {
    private let valid = Atomic<Bool>(true)

    var isValid: Bool { valid.load(ordering: .acquiring) }

    func invalidate() { valid.store(false, ordering: .releasing) }

    func check() throws(BLEError) {
        guard isValid else {
            throw BLEError.servicesChangedUnder
        }
    }
}
