import DBus
import Foundation

// ble-bench: the swift-ble side of the benchmark suite. Each subcommand does the same D-Bus
// traffic as its C floor counterpart (Benchmarks/floor) and prints one JSON line.

let usage = """
    usage: ble-bench dbus-calls seq SIZE N WARMUP
           ble-bench dbus-calls pipe SIZE N WINDOW WARMUP
           ble-bench sim-read N WARMUP          (GATT reads served by ble-sim on the same bus)
           ble-bench sim-read N WARMUP --server NAME PATH   (the same reads, of PATH at NAME: the C floor)
           ble-bench sim-read N WARMUP --paired NAME PATH   (each read of ble-sim followed by one of PATH at NAME)
           ble-bench sim-scan N HOLD_S          (discovery of N advertisers through ble-sim)
           ble-bench gatt CASE ARGS...          (the GATT cases of gatt_floor.c, through the BLE API)
           ble-bench datagram-floor MODE N INTERVAL_US   (what a datagram costs its receiver in Swift,
                                                 without swift-ble: blocking|callback|async|async-uncancellable)
           ble-bench l2cap BYTES ROUNDS         (GATT writes without response against an L2CAP channel,
                                                 hci0 to hci1 through the kernel: in the real-BlueZ guest)
    The bus is $DBUS_SYSTEM_BUS_ADDRESS; the server is org.swiftble.Bench (Benchmarks/floor).
    """

let arguments = Array(CommandLine.arguments.dropFirst())

// The work runs in a detached task while the main thread only waits, instead of an async main
// (whose main thread parks in libdispatch's signal thread): valgrind 3.19 aborts on that, and
// callgrind's instruction counts are the measure that machine load does not move.
Task.detached {
    await runCommand(arguments)
    exit(0)
}
while true { sleep(3600) }

/// Runs one subcommand and exits with its status.
func runCommand(_ arguments: [String]) async {
    if arguments.first == "gatt" {
        do {
            print(try await GattCommand.run(Array(arguments.dropFirst())))
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("ble-bench: \(error)\n".utf8))
            exit(1)
        }
    }
    if arguments.first == "datagram-floor", arguments.count == 4, let mode = DatagramFloor.Mode(rawValue: arguments[1]),
        let count = Int(arguments[2]), count > 0, let interval = Int(arguments[3]), interval >= 0
    {
        print(DatagramFloor.run(mode: mode, count: count, intervalMicroseconds: interval))
        exit(0)
    }
    if arguments.first == "l2cap", arguments.count == 3, let bytes = Int(arguments[1]), let rounds = Int(arguments[2]) {
        do {
            for line in try await L2CAPThroughput.run(bytes: bytes, rounds: rounds) { print(line) }
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("ble-bench: \(error)\n".utf8))
            exit(1)
        }
    }
    if arguments.first == "sim-read", arguments.count == 3 || arguments.count == 6, let count = Int(arguments[1]),
        let warmup = Int(arguments[2])
    {
        do {
            var server: (name: BusName, path: ObjectPath)?
            var paired: (name: BusName, path: ObjectPath)?
            if arguments.count == 6 {
                let target = (try BusName(arguments[4]), try ObjectPath(arguments[5]))
                switch arguments[3] {
                case "--server": server = target
                case "--paired": paired = target
                default: throw DBusError(.invalidValue, message: usage)
                }
            }
            let benchmark = try await SimulatorReadBenchmark()
            let (only, alongside) = (server, paired)
            let reports = try await withTaskExecutorPreference(benchmark.connection.executor) {
                try await benchmark.run(count: count, warmup: warmup, server: only, paired: alongside)
            }
            for report in reports { print(report.json) }
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("ble-bench: \(error)\n".utf8))
            exit(1)
        }
    }
    if arguments.first == "sim-scan", arguments.count == 3, let count = Int(arguments[1]), let hold = Int(arguments[2])
    {
        do {
            let benchmark = try await SimulatorScanBenchmark()
            let json = try await withTaskExecutorPreference(benchmark.connection.executor) {
                try await benchmark.run(count: count, hold: .seconds(hold))
            }
            print(json)
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("ble-bench: \(error)\n".utf8))
            exit(1)
        }
    }
    guard arguments.first == "dbus-calls", arguments.count >= 5 else {
        FileHandle.standardError.write(Data(usage.utf8))
        exit(2)
    }
    let numbers = arguments.dropFirst(2).compactMap { Int($0) }
    let mode = arguments[1]
    guard (mode == "seq" && numbers.count == 3) || (mode == "pipe" && numbers.count == 4),
        numbers.allSatisfy({ $0 > 0 || $0 == 0 })
    else {
        FileHandle.standardError.write(Data(usage.utf8))
        exit(2)
    }

    do {
        let benchmark = try await CallBenchmark()
        // The recommended setup for hot paths: the benchmark's tasks run on the connection's I/O
        // thread, so a call costs no thread hop.
        let report = try await withTaskExecutorPreference(benchmark.connection.executor) {
            if mode == "seq" {
                return try await benchmark.sequential(size: numbers[0], count: numbers[1], warmup: numbers[2])
            }
            return try await benchmark.pipelined(
                size: numbers[0], count: numbers[1], window: numbers[2], warmup: numbers[3])
        }
        print(report.json)
    } catch {
        FileHandle.standardError.write(Data("ble-bench: \(error)\n".utf8))
        exit(1)
    }
}
