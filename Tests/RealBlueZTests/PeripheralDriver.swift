import BLE
import Foundation

/// The peripheral's side of a test: what the test asks of the device the central talks to.
/// One implementation per way of serving it (the simulator's virtual peripheral, the scripted
/// peripheral on the real daemon; our own PeripheralManager on hci1 fits here too).
protocol PeripheralDriver: Sendable {
    /// The peripheral as the central (on hci0) names it.
    var id: PeripheralID { get }
    /// Waits until the central's subscription to `characteristic` reached the peripheral, so
    /// that values sent from now on are delivered.
    func waitUntilSubscribed(_ characteristic: BluetoothUUID) async throws
    /// Notifies (or indicates, per the characteristic's flag) each value, in order.
    func send(_ values: [Data], from characteristic: BluetoothUUID) async throws
    /// The value the peripheral holds now (what a central last wrote).
    func value(of characteristic: BluetoothUUID) async throws -> Data
    /// Ends the link from the peripheral's side, as a peripheral that goes away would.
    func dropLink() async throws
}

/// A test step that did not happen in time, or a peripheral that misbehaved.
struct StageError: Error, CustomStringConvertible {
    let description: String
}

/// Runs `body` with a deadline; throws ``StageError`` naming `what` when it passes.
func within<T: Sendable>(
    _ timeout: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let result = try await group.next(), let value = result else {
            throw StageError(description: "\(what): nothing within \(timeout)")
        }
        return value
    }
}

/// Checks `condition` until it holds (a few milliseconds apart), for peripheral state that
/// has no event of its own; throws ``StageError`` after `timeout`.
func waitUntil(
    _ what: String, within timeout: Duration = .seconds(20), _ condition: @escaping @Sendable () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw StageError(description: "\(what): not within \(timeout)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}
