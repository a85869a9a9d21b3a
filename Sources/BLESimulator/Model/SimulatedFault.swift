import Foundation

/// A fault the simulator injects into matching operations: how real links and peripherals
/// misbehave, on demand.
public struct SimulatedFault: Sendable, Hashable {
    /// The operation a fault applies to.
    public enum Operation: String, Sendable, Hashable, Codable {
        /// `Device1.Connect`
        case connect
        /// `Device1.Disconnect`
        case disconnect
        /// `ReadValue` of a characteristic or descriptor
        case read
        /// `WriteValue` of a characteristic or descriptor
        case write
        /// `StartNotify`
        case startNotify
        /// `AcquireNotify` and `AcquireWrite`
        case acquire
        /// `Adapter1.StartDiscovery`
        case startDiscovery
        /// `LEAdvertisingManager1.RegisterAdvertisement`: the answer of the next call received,
        /// once the advertisement is registered (its `Timeout` already runs)
        case registerAdvertisement
        /// `GattManager1.RegisterApplication`: the answer of the next call received, once the
        /// application is registered
        case registerApplication
    }

    /// What happens to a matching operation.
    public enum Action: Sendable, Hashable {
        /// It fails with this D-Bus error name and message.
        case fail(name: String, message: String)
        /// A GATT operation fails with this ATT error, mapped the way bluetoothd maps it.
        case attError(UInt8)
        /// It is answered this much later. A delayed write also holds back the writes made
        /// after it on the same link, which the peer takes in order.
        case delay(Duration)
        /// It is never answered (the client's own timeout must fire).
        case noReply
        /// The link drops while it is outstanding (`Operation failed with ATT error: 0x0e`).
        case dropLink
    }

    /// Which operation.
    public var operation: Operation
    /// Only for this peripheral address (any when nil); for `startDiscovery`, the adapter's.
    public var address: String?
    /// Only for this characteristic UUID (any when nil).
    public var characteristic: String?
    /// What happens.
    public var action: Action
    /// How many matching operations it affects; nil for all of them.
    public var count: Int?

    /// Creates a fault.
    public init(
        _ operation: Operation, address: String? = nil, characteristic: String? = nil, action: Action, count: Int? = 1
    ) {
        self.operation = operation
        self.address = address
        self.characteristic = characteristic
        self.action = action
        self.count = count
    }
}

/// A fault with its remaining count, as stored by the simulator.
struct FaultRule: Sendable {
    var fault: SimulatedFault
    var remaining: Int?
}

extension SimState {
    /// Takes the first fault matching the operation (and counts it down). The address is
    /// formatted only when some fault is pending: this runs on every GATT call.
    mutating func takeFault(
        _ operation: SimulatedFault.Operation, address formatted: @autoclosure () -> String,
        characteristic: String? = nil
    ) -> SimulatedFault.Action? {
        guard !faults.isEmpty else { return nil }
        let address = formatted()
        for index in faults.indices {
            let fault = faults[index].fault
            guard fault.operation == operation else { continue }
            if let wanted = fault.address, wanted.uppercased() != address.uppercased() { continue }
            if let wanted = fault.characteristic {
                guard let characteristic, BlueZUUIDMatch.same(wanted, characteristic) else { continue }
            }
            if let remaining = faults[index].remaining {
                if remaining <= 1 { faults.remove(at: index) } else { faults[index].remaining = remaining - 1 }
            }
            return fault.action
        }
        return nil
    }
}
