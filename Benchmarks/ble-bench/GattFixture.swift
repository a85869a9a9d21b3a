import BLE
import Foundation

/// The peripherals and characteristics of the benchmark scenarios
/// (`Scenarios/tools/make_bench_gatt.py`): peripheral `index` has address `B0:00:00:00:HH:LL`,
/// and its service 0 holds the four characteristics the benchmarks use.
enum GattFixture {
    static let service = BluetoothUUID("b0b00000-5b1e-4d2a-9f00-62656e636800")
    static let read20 = BluetoothUUID("b0b00001-5b1e-4d2a-9f00-62656e636800")
    static let read512 = BluetoothUUID("b0b00002-5b1e-4d2a-9f00-62656e636800")
    static let write = BluetoothUUID("b0b00003-5b1e-4d2a-9f00-62656e636800")
    static let notify = BluetoothUUID("b0b00004-5b1e-4d2a-9f00-62656e636800")
    static let notifyText = "b0b00004-5b1e-4d2a-9f00-62656e636800"

    static func address(_ index: Int) -> String {
        String(format: "B0:00:00:00:%02X:%02X", index >> 8, index & 0xFF)
    }

    static func id(_ index: Int) throws(BLEError) -> PeripheralID {
        try PeripheralID(address: address(index))
    }

    /// A central on the system bus (the benchmark's private bus), powered on.
    static func central(options: CentralOptions = CentralOptions()) async throws(BLEError) -> Central {
        let central = try await Central(options: options)
        try await central.waitUntilPoweredOn(timeout: .seconds(10))
        return central
    }

    /// Connects peripheral 1 (a targeted scan finds it the first time) and returns the
    /// characteristic `uuid` of service 0.
    static func connectedCharacteristic(_ central: Central, _ uuid: BluetoothUUID) async throws(BLEError)
        -> (Peripheral, Characteristic)
    {
        let peripheral = try await central.connect(try id(1))
        return (peripheral, try await peripheral.characteristic(uuid, in: service))
    }
}

extension GattFixture {
    /// Whether ``onCentral(_:_:)`` runs its body on the central's executor, the I/O thread.
    static var runsOnCentral: Bool { ProcessInfo.processInfo.environment["BENCH_EXECUTOR"] != "pool" }

    /// Runs a measured loop as the SDK recommends for hot paths: in a task that prefers the
    /// central's executor (its bus connection's I/O thread), so an operation costs no thread
    /// switch. `BENCH_EXECUTOR=pool` runs it on the global executor instead, as code that does
    /// not ask for the executor does (one hop back per operation).
    static func onCentral<T: Sendable>(
        _ central: Central, _ body: () async throws -> T
    ) async throws -> T {
        if !runsOnCentral { return try await body() }
        return try await withTaskExecutorPreference(central.executor) { try await body() }
    }

    /// The executor a notification receiver task runs on (see ``onCentral(_:_:)``).
    static func receiverExecutor(_ central: Central) -> (any TaskExecutor)? {
        runsOnCentral ? central.executor : nil
    }
}

/// A failure of the benchmark itself (not of the SDK).
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}
