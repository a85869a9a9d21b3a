import BlueZ
import DBus
import Foundation

/// What each control method does, in Swift types: arguments already taken out of the message,
/// failures thrown as ``SimulatorControlError`` names. Thin over ``Simulator``'s own API, which
/// is what a Swift test would call.
///
/// The references are weak: the exported methods live in the control connection's object
/// table, which must not keep the simulator (which owns the connection) alive.
struct ControlCommands: Sendable {
    weak var simulator: Simulator?
    weak var service: ControlService?

    private func alive() throws(DBusError) -> Simulator {
        guard let simulator else {
            throw SimulatorControlError.make(SimulatorControlError.failed, "the simulator has been stopped")
        }
        return simulator
    }

    func addPeripheral(json: String) throws(DBusError) {
        let simulator = try alive()
        let peripheral = try ControlJSON.decode(VirtualPeripheral.self, from: json, what: "peripheral JSON")
        _ = try Simulator.controlAddress(peripheral.address)
        try Self.invalidArguments { () throws(DBusError) in try simulator.addPeripheral(peripheral) }
    }

    func removePeripheral(address text: String) throws(DBusError) {
        let simulator = try alive()
        _ = try simulator.requirePeripheral(try Simulator.controlAddress(text))
        try simulator.removePeripheral(address: text)
    }

    /// The JSON is a whole peripheral that replaces the current description; its `address` must
    /// be the one named.
    func updatePeripheral(address text: String, json: String) throws(DBusError) {
        let simulator = try alive()
        let address = try Simulator.controlAddress(text)
        _ = try simulator.requirePeripheral(address)
        let replacement = try ControlJSON.decode(VirtualPeripheral.self, from: json, what: "peripheral JSON")
        guard (try? BluetoothAddress(replacement.address)) == address else {
            throw SimulatorControlError.make(
                SimulatorControlError.invalidArguments,
                "the JSON describes \(replacement.address), not \(address); remove and add to change an address")
        }
        // addPeripheral checks the GATT database the same way; update must not let a bad one in.
        try Self.invalidArguments { () throws(DBusError) in
            _ = try GattLayout(peripheral: replacement, devicePath: .root)
        }
        try simulator.updatePeripheral(address: text) { $0 = replacement }
    }

    func notify(address text: String, characteristic: String, value: Data) throws(DBusError) -> UInt32 {
        let simulator = try alive()
        try simulator.requireCharacteristic(characteristic, at: try Simulator.controlAddress(text))
        return UInt32(clamping: try simulator.notify(address: text, characteristic: characteristic, value: value))
    }

    /// Checks the arguments now (so the caller gets the error), then runs in the background: the
    /// method answers at once and the values follow. The run holds the simulator until it ends;
    /// ``Simulator/stop()`` cancels it.
    func startNotifications(
        address text: String, characteristic: String, count: UInt32, intervalMicroseconds: UInt32, size: UInt32
    ) throws(DBusError) {
        let simulator = try alive()
        guard let service else { throw SimulatorControlError.make(SimulatorControlError.failed, "control is closed") }
        try simulator.requireCharacteristic(characteristic, at: try Simulator.controlAddress(text))
        let interval = Duration.microseconds(Int64(intervalMicroseconds))
        try Simulator.checkRun(count: Int(count), interval: interval, payload: Int(size))
        service.launch {
            _ = try? await simulator.startNotifications(
                address: text, characteristic: characteristic, count: Int(count), interval: interval,
                payload: Int(size))
        }
    }

    func injectFault(json: String) throws(DBusError) {
        let simulator = try alive()
        simulator.inject(try ControlJSON.decode(SimulatedFault.self, from: json, what: "fault JSON"))
    }

    func clearFaults() throws(DBusError) {
        try alive().clearFaults()
    }

    func dropLink(address: String, afterMilliseconds: UInt32) throws(DBusError) {
        try alive().dropLink(address: address, after: .milliseconds(Int64(afterMilliseconds)))
    }

    func requestSecurity(address: String, level: String) throws(DBusError) -> UInt32 {
        guard let level = SimulatedPairing.SecurityLevel(rawValue: level) else {
            throw SimulatorControlError.make(
                SimulatorControlError.invalidArguments, "level \"\(level)\" is not \"encrypted\" or \"authenticated\"")
        }
        return UInt32(try alive().requestSecurity(address: address, level: level))
    }

    func setPowered(adapter: UInt32, on: Bool) throws(DBusError) {
        let simulator = try alive()
        guard Int(adapter) < simulator.adapterCount else {
            throw SimulatorControlError.make(
                SimulatorControlError.unknownAdapter,
                "no adapter hci\(adapter) (the simulator has \(simulator.adapterCount))")
        }
        simulator.setPowered(on, adapter: Int(adapter))
    }

    func restart() async throws(DBusError) {
        let simulator = try alive()
        do {
            try await simulator.restartDaemon()
        } catch {
            throw SimulatorControlError.make(SimulatorControlError.failed, "bluetoothd did not restart: \(error)")
        }
    }

    /// The stored value; empty when the characteristic exists but holds nothing.
    func value(address text: String, characteristic: String) throws(DBusError) -> Data {
        let simulator = try alive()
        try simulator.requireCharacteristic(characteristic, at: try Simulator.controlAddress(text))
        return try simulator.value(address: text, characteristic: characteristic) ?? Data()
    }

    /// ``SimulatorStatistics`` as `a{sv}` of `t`, plus `peripherals` (`u`).
    func statistics() throws(DBusError) -> DBusValue {
        let simulator = try alive()
        let counters = simulator.statistics
        let entries: [(String, DBusValue)] = [
            ("advertisementsDelivered", .uint64(UInt64(clamping: counters.advertisementsDelivered))),
            ("notificationsSent", .uint64(UInt64(clamping: counters.notificationsSent))),
            ("indicationsConfirmed", .uint64(UInt64(clamping: counters.indicationsConfirmed))),
            ("gattOperations", .uint64(UInt64(clamping: counters.gattOperations))),
            ("connections", .uint64(UInt64(clamping: counters.connections))),
            ("peripherals", .uint32(UInt32(clamping: simulator.peripherals.count))),
        ]
        return .dictionary(
            key: .string, value: .variant, entries.map { DBusDictionaryEntry(.string($0.0), .variant($0.1)) })
    }

    /// Runs `body`, naming an unnamed failure (the simulator's own validation) `InvalidArguments`.
    private static func invalidArguments(_ body: () throws(DBusError) -> Void) throws(DBusError) {
        do {
            try body()
        } catch let failure where failure.name == nil {
            throw SimulatorControlError.make(SimulatorControlError.invalidArguments, failure.message)
        }
    }
}
