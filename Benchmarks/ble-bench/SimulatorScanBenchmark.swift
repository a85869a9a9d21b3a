import BlueZ
import DBus
import Foundation

/// A crowd of advertisers scanned through ble-sim from a raw D-Bus client: StartDiscovery,
/// then the time until `count` distinct devices were announced (`InterfacesAdded`), then
/// `hold` more seconds of scanning that count the device `PropertiesChanged` signals.
struct SimulatorScanBenchmark {
    let connection: Connection

    /// What the signal consumer has seen so far.
    final class Progress: Sendable {
        struct Counts {
            var devices = 0
            var halfAt: UInt64 = 0
            var allAt: UInt64 = 0
            var laterReports = 0
        }
        let counts = PosixMutex(Counts())
    }

    init() async throws {
        connection = try await Connection(bus: .system)
    }

    func run(count: Int, hold: Duration) async throws -> String {
        let adapter = try ObjectPath("/org/bluez/hci0")
        let signals = try await connection.signals(
            matchingAny: [
                MatchRule(sender: BlueZService.busName, interface: .objectManager),
                MatchRule(sender: BlueZService.busName, interface: .properties),
            ], buffering: .unbounded)
        let progress = Progress()
        let consumer = Task {
            var devices = Set<ObjectPath>()
            for await message in signals {
                let now = Meter.monotonicNanoseconds()
                if message.member?.rawValue == "InterfacesAdded", case .objectPath(let path)? = message.body.first,
                    path.elements.count == 4, devices.insert(path).inserted
                {
                    progress.counts.withLock { counts in
                        counts.devices = devices.count
                        if devices.count == count / 2 { counts.halfAt = now }
                        if devices.count == count { counts.allAt = now }
                    }
                } else if message.member?.rawValue == "PropertiesChanged" {
                    progress.counts.withLock { counts in if counts.allAt != 0 { counts.laterReports += 1 } }
                }
            }
        }
        let meter = Meter()
        let start = Meter.monotonicNanoseconds()
        _ = try await connection.call(
            destination: BlueZService.busName, path: adapter, interface: BlueZInterface.adapter1,
            member: BlueZMethod.startDiscovery)
        while progress.counts.withLock({ $0.allAt == 0 }) { try await Task.sleep(for: .milliseconds(5)) }
        FileHandle.standardOutput.write(Data("all\n".utf8))
        try await Task.sleep(for: hold)
        consumer.cancel()
        let counts = progress.counts.withLock { $0 }
        let cpu = Double(Meter.cpuNanoseconds() - meter.cpuStart) / 1e9
        func seconds(_ t: UInt64) -> String { String(format: "%.3f", Double(t &- start) / 1e9) }
        return """
            {"impl":"swift-ble","mode":"sim-scan","n":\(count),"devices":\(counts.devices),\
            "half_reported_s":\(seconds(counts.halfAt)),"all_reported_s":\(seconds(counts.allAt)),\
            "hold_s":\(hold.components.seconds),"reports_during_hold":\(counts.laterReports),\
            "client_cpu_s":\(String(format: "%.3f", cpu))}
            """
    }
}
