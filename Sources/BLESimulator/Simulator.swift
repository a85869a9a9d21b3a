import BlueZ
import DBus
import Foundation

/// A stand-in for bluetoothd on a D-Bus bus: it owns `org.bluez`, exports adapters, devices
/// and GATT objects the way the real daemon does, and serves scriptable virtual peripherals,
/// so BLE code can be tested without a radio.
///
/// ```swift
/// let bus = try TestBus()
/// let simulator = try await Simulator.start(on: .address(bus.address))
/// try simulator.addPeripheral(VirtualPeripheral(address: "C4:7C:8D:6A:11:22", name: "HRM", services: [...]))
/// // point the code under test at bus.address
/// ```
public final class Simulator: Sendable {
    let core: SimulatorCore
    private let bus: Connection.Bus
    let daemon: PosixMutex<Daemon?>
    /// The control interface's connection (see ``SimulatorControlInterface``); it outlives
    /// daemon restarts and goes at ``stop()``.
    private let control: PosixMutex<ControlService?>

    /// The bluetoothd release imitated.
    public var profile: BlueZProfile { core.profile }
    /// The options it runs with.
    public var options: SimulatorOptions { core.options }

    private init(bus: Connection.Bus, profile: BlueZProfile, options: SimulatorOptions) {
        self.bus = bus
        self.core = SimulatorCore(options: options, profile: profile)
        self.daemon = PosixMutex(nil)
        self.control = PosixMutex(nil)
    }

    /// Starts a simulated bluetoothd on `bus`.
    public static func start(
        on bus: Connection.Bus, profile: BlueZProfile = .v5_66, options: SimulatorOptions = SimulatorOptions(),
        peripherals: [VirtualPeripheral] = []
    ) async throws(DBusError) -> Simulator {
        let simulator = Simulator(bus: bus, profile: profile, options: options)
        for peripheral in peripherals { try simulator.addPeripheral(peripheral) }
        let daemon = try await Daemon.start(core: simulator.core, bus: bus)
        simulator.daemon.withLock { $0 = daemon }
        if options.controlInterface {
            do throws(DBusError) {
                let control = try await ControlService.start(bus: bus, simulator: simulator)
                simulator.control.withLock { $0 = control }
            } catch {
                simulator.stop()
                throw error
            }
        }
        return simulator
    }

    deinit { stop() }

    /// Stops the daemon and the control interface; `org.bluez` and `org.swiftble.Simulator`
    /// leave the bus, and notification runs started over the bus end.
    public func stop() {
        stopDaemon()
        // libdispatch traps when a suspended queue is released.
        holdNotifySockets(false)
        control.withLock { $0.take() }?.close()
    }

    private func stopDaemon() {
        daemon.withLock { $0.take() }?.shutdown()
    }

    /// Whether a daemon is running.
    public var isRunning: Bool { daemon.withLock { $0 != nil } }

    /// The unique bus name of the running daemon (changes at every restart).
    public var uniqueName: BusName? { daemon.withLock { $0?.connection.uniqueName } }

    /// Restarts bluetoothd: the name is released (clients see `NameOwnerChanged` to nobody),
    /// every object and session is lost, then, `downtime` later, a new daemon takes `org.bluez`
    /// under a new unique name with the adapters and the stored devices only (trace §13.6).
    /// Cancellation cuts the downtime short.
    public func restartDaemon(downtime: Duration = .zero) async throws(DBusError) {
        // The control interface stays: a Restart() asked over the bus is answered afterwards.
        stopDaemon()
        if downtime > .zero { try? await Task.sleep(for: downtime) }
        let fresh = try await Daemon.start(core: core, bus: bus)
        daemon.withLock { $0 = fresh }
    }

    // MARK: The world

    /// Puts a peripheral in range; it advertises to discovering adapters from now on.
    public func addPeripheral(_ peripheral: VirtualPeripheral) throws(DBusError) {
        let address = try BluetoothAddress(peripheral.address)
        _ = try GattLayout(peripheral: peripheral, devicePath: .root)
        core.state.withLock { state in
            state.peripherals[address] = PeripheralRecord(peripheral)
            state.scheduleAdvertising(address, now: MonotonicNanos.now())
        }
    }

    /// Takes a peripheral out of range: a connected link drops (supervision timeout).
    public func removePeripheral(address: String) throws(DBusError) {
        let address = try BluetoothAddress(address)
        withDaemon { daemon, state in
            for path in state.devices.keys.sorted() where state.devices[path]?.address == address {
                daemon.linkDown(&state, path, reason: .timeout)
            }
        }
        core.state.withLock { state in _ = state.peripherals.removeValue(forKey: address) }
    }

    /// Changes a peripheral's description (advertising data, RSSI, …). Stored values follow
    /// their characteristics by UUID. GATT changes reach connected devices at once when the
    /// peer has a Service Changed characteristic (`2A05` in `1801`), others at their next
    /// connection with it, and never devices of a peer without one whose cache is filled
    /// (bluetoothd keeps a stale cache until `RemoveDevice`).
    public func updatePeripheral(address: String, _ change: (inout VirtualPeripheral) -> Void) throws(DBusError) {
        let address = try BluetoothAddress(address)
        try core.state.withLock { (state: inout SimState) throws(DBusError) in
            guard var record = state.peripherals[address] else {
                throw DBusError(.invalidValue, message: "no peripheral \(address)")
            }
            let before = record.definition
            var after = before
            change(&after)
            record = record.updated(to: after)
            state.peripherals[address] = record
            if after.advertising && (!before.advertising || after.advertisingIntervalMs != before.advertisingIntervalMs)
            {
                state.scheduleAdvertising(address, now: MonotonicNanos.now())
            }
        }
        // Connected centrals hear of GATT changes through Service Changed, if the peer has it.
        withDaemon { daemon, state in
            for path in state.devices.keys.sorted() where state.devices[path]?.address == address {
                daemon.servicesChanged(&state, path)
            }
        }
    }

    /// The peripherals in range.
    public var peripherals: [VirtualPeripheral] {
        core.state.withLock { state in
            state.peripherals.keys.sorted().compactMap { address in
                state.peripherals[address].flatMap { $0.servedBy == nil ? $0.definition : nil }
            }
        }
    }

    /// The value a peripheral holds for a characteristic (what centrals wrote, or its initial value).
    public func value(address: String, characteristic uuid: String) throws(DBusError) -> Data? {
        let address = try BluetoothAddress(address)
        return core.state.withLock { state in
            guard let record = state.peripherals[address], let key = record.valueKey(of: uuid) else { return nil }
            return record.values[key]
        }
    }

    /// What the simulator has done so far.
    public var statistics: SimulatorStatistics { core.state.withLock { $0.statistics } }

    // MARK: Driving the peripherals

    /// Makes a peripheral send a notification (or indication) of `value` from a characteristic
    /// to every adapter connected to it; returns how many were delivered.
    @discardableResult
    public func notify(address: String, characteristic uuid: String, value: Data) throws(DBusError) -> Int {
        let address = try BluetoothAddress(address)
        return withDaemon { daemon, state in
            daemon.broadcast(&state, address: address, characteristic: uuid, value: value)
        } ?? 0
    }

    // MARK: Faults

    /// Adds a fault for matching operations (see ``SimulatedFault``).
    public func inject(_ fault: SimulatedFault) {
        core.state.withLock { state in state.faults.append(FaultRule(fault: fault, remaining: fault.count)) }
    }

    /// Removes every pending fault.
    public func clearFaults() {
        core.state.withLock { state in state.faults.removeAll() }
    }

    /// Drops the link to a peripheral now, as the radio losing it would.
    public func dropLink(address: String, reason: DisconnectReason = .timeout) throws(DBusError) {
        let address = try BluetoothAddress(address)
        withDaemon { daemon, state in
            for path in state.devices.keys.sorted() where state.devices[path]?.address == address {
                daemon.linkDown(&state, path, reason: reason)
            }
        }
    }

    /// Powers an adapter off or on, as `Powered` or rfkill would.
    public func setPowered(_ on: Bool, adapter index: Int = 0) {
        // The daemon stores and announces `Powered` itself: setting the property again here
        // sent a second PropertiesChanged (and one even when nothing changed).
        daemon.withLock { $0 }?.applyExternalPower(on, adapter: index)
    }

    func withDaemon<Result>(_ body: (Daemon, inout SimState) -> Result) -> Result? {
        guard let current = daemon.withLock({ $0 }) else { return nil }
        return core.state.withLock { state in
            guard current.isCurrent(state) else { return nil }
            return body(current, &state)
        }
    }
}
