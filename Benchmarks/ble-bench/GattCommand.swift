import Foundation

/// `ble-bench gatt CASE ARGS…`: the argument forms of `gatt_floor` (Benchmarks/floor/gatt_floor.c).
enum GattCommand {
    static let usage = """
        usage: ble-bench gatt connect N
               ble-bench gatt read|write SIZE N WARMUP
               ble-bench gatt wcmd SIZE N WARMUP WINDOW
               ble-bench gatt notify dbus|acquire N INTERVAL_US SIZE
               ble-bench gatt notify callback|async N INTERVAL_US SIZE   (AcquireNotify without swift-ble)
               ble-bench gatt scan N
               ble-bench gatt memory N1,N2,...
        """

    static func run(_ arguments: [String]) async throws -> String {
        let numbers = arguments.dropFirst().compactMap { Int($0) }
        switch (arguments.first, arguments.count) {
        case ("connect", 2) where numbers.count == 1:
            return try await GattBenchmarks.connect(count: numbers[0])
        case ("read", 4) where numbers.count == 3:
            return try await GattBenchmarks.read(size: numbers[0], count: numbers[1], warmup: numbers[2])
        case ("write", 4) where numbers.count == 3:
            return try await GattBenchmarks.write(size: numbers[0], count: numbers[1], warmup: numbers[2])
        case ("wcmd", 5) where numbers.count == 4 && numbers[3] >= 1:
            return try await GattBenchmarks.writeCommands(
                size: numbers[0], count: numbers[1], warmup: numbers[2], window: numbers[3])
        case ("notify", 5) where ["dbus", "acquire"].contains(arguments[1]) && numbers.count == 3:
            return try await GattBenchmarks.notify(
                acquired: arguments[1] == "acquire", count: numbers[0], interval: numbers[1], size: numbers[2])
        case ("notify", 5) where numbers.count == 3:
            guard let mode = DatagramFloor.Mode(rawValue: arguments[1]), mode != .blocking else {
                throw BenchFailure(description: usage)
            }
            return try await GattBenchmarks.notifyWithoutSDK(
                mode: mode, count: numbers[0], interval: numbers[1], size: numbers[2])
        case ("scan", 2) where numbers.count == 1:
            return try await GattBenchmarks.scan(count: numbers[0])
        case ("memory", 2):
            return try await GattBenchmarks.memory(counts: arguments[1].split(separator: ",").compactMap { Int($0) })
        default:
            throw BenchFailure(description: usage)
        }
    }
}
