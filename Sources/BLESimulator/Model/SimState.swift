import BlueZ
import DBus
import Foundation

/// Everything the simulator knows, behind one lock: the simulated world (peripherals and
/// their GATT values, which survive a bluetoothd restart) and the daemon's state (objects,
/// sessions, links, which do not).
struct SimState: Sendable {
    /// Peripherals in radio range, by address.
    var peripherals: [BluetoothAddress: PeripheralRecord] = [:]
    /// Devices bluetoothd stored on disk (connected or paired once): they reappear after a
    /// restart, without RSSI or advertising data.
    var stored: Set<BluetoothAddress> = []
    /// The resolved service UUIDs of stored devices (the info file's `Services=`), which a
    /// stored device lists in `UUIDs` after a restart.
    var storedServices: [BluetoothAddress: [String]] = [:]
    /// Adapter power survives a daemon restart only through AutoEnable; kept per index.
    var adapters: [AdapterState] = []
    /// Device objects of the running daemon, by path.
    var devices: [ObjectPath: DeviceState] = [:]
    /// Discovery sessions per adapter index and client.
    var discovery: [Int: [BusName: DiscoverySession]] = [:]
    /// Pre-set discovery filters per adapter and client (SetDiscoveryFilter before Start).
    var filters: [Int: [BusName: DiscoveryFilter]] = [:]
    /// When each advertising peripheral sends next.
    var advertising = AdvertisingSchedule()
    /// Device object paths by adapter index and address: formatting one is a good part of
    /// handling an advertising report.
    var devicePaths: [Int: [BluetoothAddress: ObjectPath]] = [:]
    /// Injected faults, matched in order.
    var faults: [FaultRule] = []
    /// Peripherals whose next link comes up without `Connected=true`
    /// (``Simulator/silenceNextConnectedSignal(address:)``).
    var silentConnects: Set<BluetoothAddress> = []
    /// Bumped at every daemon restart so work scheduled by an old daemon does nothing.
    var generation = 0
    /// Counters for tests and the control interface.
    var statistics = SimulatorStatistics()
    /// The peripheral role: registered GATT applications and advertisements (Server/).
    var server = ServerState()
    /// Advertisement monitors (passive scanning), offered by an experimental daemon only.
    var monitors = MonitorRegistry()
    /// Registered pairing agents (a daemon's state: a restart forgets them).
    var agents = AgentRegistry()
    /// Keys of bonded devices, which survive a restart like `stored`.
    var bonds: [BluetoothAddress: AttributeSecurity] = [:]
    /// Numbers the bondings, so stale timers and agent replies do nothing.
    var nextBonding = 0
}

extension SimState {
    /// The path of `address`'s device object on `adapter`, made once.
    mutating func devicePath(_ address: BluetoothAddress, adapter: AdapterState) -> ObjectPath? {
        if let path = devicePaths[adapter.index]?[address] { return path }
        guard let path = try? BlueZPath.device(address, adapter: adapter.path) else { return nil }
        devicePaths[adapter.index, default: [:]][address] = path
        return path
    }

    /// Starts a peripheral's advertising events at its address-derived phase.
    mutating func scheduleAdvertising(_ address: BluetoothAddress, now: UInt64) {
        guard let record = peripherals[address], record.definition.advertising else { return }
        var due = AdvertisingSchedule.firstDue(address, intervalMs: record.definition.advertisingIntervalMs, now: now)
        // Never the due time of a pending entry: that one would become valid again.
        if due == record.nextAdvertisement { due &+= 1 }
        peripherals[address]?.nextAdvertisement = due
        advertising.add(address, due: due)
    }
}

/// A peripheral in the simulated world.
struct PeripheralRecord: Sendable {
    var definition: VirtualPeripheral
    /// Characteristic values by position (standard services at negative service indices).
    var values: [ValueKey: Data] = [:]
    /// When its next advertisement is due (monotonic ns); the schedule entry with this due
    /// time is the valid one.
    var nextAdvertisement: UInt64 = 0
    /// Index into `notifyValues` per characteristic, for periodic notifications.
    var notifyCursor: [ValueKey: Int] = [:]
    /// The adapter whose registered applications and advertisements this peripheral is (see
    /// `Daemon+AdapterBridge.swift`); nil for a virtual peripheral.
    var servedBy: Int?

    /// The GATT database a central connected through `devicePath` finds. A peripheral served
    /// by another simulated adapter has only its applications' services: that bluetoothd's own
    /// GAP and GATT services are not modelled (the bridge maps services by position).
    func layout(devicePath: ObjectPath, claimed: Set<String>) throws(DBusError) -> GattLayout {
        try GattLayout(peripheral: definition, devicePath: devicePath, claimed: claimed, standard: servedBy == nil)
    }

    init(_ definition: VirtualPeripheral) {
        self.definition = definition
        for (s, service) in definition.servedServices {
            for (c, characteristic) in service.characteristics.enumerated() {
                values[ValueKey(service: s, characteristic: c)] = characteristic.value.data
                for (d, descriptor) in characteristic.descriptors.enumerated() {
                    values[ValueKey(service: s, characteristic: c, descriptor: d)] = descriptor.value.data
                }
            }
        }
    }
}

/// Identifies a characteristic or descriptor of a peripheral by position.
struct ValueKey: Sendable, Hashable {
    var service: Int
    var characteristic: Int
    var descriptor: Int = -1
}

/// One adapter of the running daemon.
struct AdapterState: Sendable {
    var index: Int
    var path: ObjectPath
    var address: BluetoothAddress
    var powered: Bool
    var discovering = false
    /// When the current discovery started (monotonic ns), for the scan-start latency.
    var discoveryStarted: UInt64 = 0
}

/// A client's discovery session on one adapter.
struct DiscoverySession: Sendable {
    var filter: DiscoveryFilter?
}

/// A device object of the running daemon.
struct DeviceState: Sendable {
    var path: ObjectPath
    var adapterIndex: Int
    var address: BluetoothAddress
    var temporary = true
    var connected = false
    /// A Disconnect is waiting for the link to go (bluetoothd's 2 s `DISCONNECT_TIMER`).
    var disconnecting = false
    var servicesResolved = false
    var paired = false
    /// The key bluetoothd holds for it: the link is encrypted at this level once up (an LE
    /// link to a bonded device is started at BT_IO_SEC_MEDIUM or more).
    var bondSecurity = AttributeSecurity.none
    /// Replies owed to Connect calls waiting for the link.
    var pendingConnects: [MethodReply] = []
    /// A `Pair` in progress, or a pairing the peripheral asked for.
    var bonding: Bonding?
    /// Bonded by a pairing the peripheral asked for before services were resolved: `Paired`
    /// is announced with `ServicesResolved` (`pending_paired` of `src/device.c`).
    var pendingPaired = false
    /// Delayed GATT requests still owed a reply, by id; link loss fails them (ATT 0x0E).
    var pendingOperations: [Int: MethodReply] = [:]
    var nextOperation = 0
    /// Reads in flight per characteristic or descriptor: a read at the same offset joins one,
    /// another offset is refused (`InProgress`).
    var readsInFlight: [ObjectPath: PendingRead] = [:]
    /// Bumped at every connect and disconnect so stale timers do nothing.
    var linkGeneration = 0
    /// The exported GATT database, once resolved (kept after disconnect: `Cache=always`).
    var gatt: GattLayout?
    /// The gap plugin read the peer's Generic Access service (see `Daemon+GenericAccess.swift`).
    var genericAccessRead = false
    /// Service UUIDs loaded from storage, for a device not resolved in this daemon's life.
    var storedServices: [String]?
    /// Last RSSI reported on D-Bus, if present.
    var rssi: Int16?
    var txPower: Int16?
    var manufacturerData: [UInt16: Data] = [:]
    var serviceData: [String: Data] = [:]
    var seenThisDiscovery = false
    var lastSeen: UInt64 = 0
    /// Notify sessions per characteristic path: the clients that called StartNotify.
    var notifySessions: [ObjectPath: Set<BusName>] = [:]
    /// StartNotify calls whose CCC write is still under way (a delayed one): a repeat is InProgress.
    var notifyPending: [ObjectPath: Set<BusName>] = [:]
    /// Characteristics with a write request in flight (BlueZ allows one).
    var writesInFlight: Set<ObjectPath> = []
    /// Writes the peer has yet to take, in arrival order (ids among `pendingOperations`): a
    /// link carries its writes one after another, so a write that comes after a delayed one is
    /// taken after it, though nothing delays it (see `Daemon+OrderedWrites.swift`).
    var writeOrder: [Int] = []
    /// The writes of `writeOrder` whose time has come, each with what taking it does.
    var writesDue: [Int: @Sendable (Daemon, inout SimState) -> Void] = [:]
    /// Characteristics with a periodic-notification ticker on the current link.
    var tickers: Set<ObjectPath> = []
    /// The Battery Level characteristic the battery plugin subscribed to, while `Battery1` exists.
    var batteryLevel: ObjectPath?
    /// AcquireNotify and AcquireWrite channels, by characteristic path.
    var acquiredNotify: [ObjectPath: AcquiredChannel] = [:]
    var acquiredWrite: [ObjectPath: AcquiredChannel] = [:]
    /// An indication awaits its confirmation on this link (ATT allows one in flight).
    var indicationInFlight = false
    /// Indications the peer holds back until then, oldest first: characteristic and value.
    var indicationQueue: [(path: ObjectPath, value: Data)] = []
    /// The last operation forwarded to a bridged peripheral's applications; the next one
    /// waits for it (see `Daemon+BridgedRequests.swift`).
    var bridgeTail: Task<Void, Never>?
}

/// A delayed read and every call waiting for its result.
struct PendingRead: Sendable {
    var offset: UInt16
    var replies: [MethodReply]
}

/// The simulator's end of an AcquireNotify/AcquireWrite socket pair.
struct AcquiredChannel: Sendable {
    var descriptor: FileDescriptor
    var owner: BusName

    /// Ends the channel as bluetoothd does (HUP): the client reads end-of-file, and so does
    /// the channel's dispatch source, which then closes our end.
    func hangUp() {
        _ = Glibc.shutdown(descriptor.rawValue, Int32(SHUT_RDWR))
    }
}

/// Counts of what the simulator did, for tests and benchmarks.
public struct SimulatorStatistics: Sendable, Hashable {
    /// Advertising reports delivered to adapters that discover or have an active advertisement
    /// monitor.
    public var advertisementsDelivered = 0
    /// Notifications and indications sent (D-Bus and AcquireNotify).
    public var notificationsSent = 0
    /// Indications confirmed by the (simulated) central stack.
    public var indicationsConfirmed = 0
    /// GATT reads and writes served.
    public var gattOperations = 0
    /// Connections established.
    public var connections = 0
    /// L2CAP channels centrals opened to virtual peripherals.
    public var l2capChannelsOpened = 0
    /// SDUs virtual peripherals received on L2CAP channels.
    public var l2capSDUsReceived = 0
    /// Their bytes.
    public var l2capBytesReceived = 0
}
