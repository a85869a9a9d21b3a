import BlueZ
import DBus
import Foundation

extension Simulator {
    /// Sets the value a peripheral holds for a characteristic, as its own firmware would
    /// (a sensor taking a new reading): later reads return it; nobody is notified. Returns
    /// whether the peripheral has the characteristic.
    @discardableResult
    public func setValue(address: String, characteristic uuid: String, _ value: Data) throws(DBusError) -> Bool {
        let address = try BluetoothAddress(address)
        return core.state.withLock { state in
            guard var record = state.peripherals[address], let key = record.valueKey(of: uuid) else { return false }
            record.values[key] = value
            state.peripherals[address] = record
            return true
        }
    }

    /// How many of the daemon's delayed actions (replies a `delay` fault holds back, link
    /// events, a Disconnect's own delay) have not run yet: zero once everything the daemon set
    /// to happen later has happened, for tests that wait for late faults to play out.
    public var delayedActions: Int {
        daemon.withLock { $0 }?.delayedActions.load(ordering: .acquiring) ?? 0
    }

    /// The injected faults that no operation has used up yet, in the order they match.
    public var pendingFaults: [SimulatedFault] {
        core.state.withLock { state in state.faults.map(\.fault) }
    }
}

extension PeripheralRecord {
    /// Where the first characteristic `uuid` of the peripheral's own services keeps its value.
    func valueKey(of uuid: String) -> ValueKey? {
        for (s, service) in definition.servedServices {
            for (c, characteristic) in service.characteristics.enumerated()
            where BlueZUUIDMatch.same(characteristic.uuid, uuid) {
                return ValueKey(service: s, characteristic: c)
            }
        }
        return nil
    }
}
