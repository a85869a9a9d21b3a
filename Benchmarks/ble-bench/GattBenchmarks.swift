import BLE
import DBus
import Foundation

/// The GATT benchmarks of issue 8 through the public BLE API (Central, Peripheral,
/// Characteristic): the same work as `gatt_floor` and `Benchmarks/bleak_bench.py`. Each returns
/// the JSON line of its run.
enum GattBenchmarks {
    /// Connect, wait until services are resolved, discover the 5 × 4 tree; disconnect; N times.
    /// With the wake-up probe preloaded, also the time each connection spent after its last
    /// wake-up (see ``WakeProbe``).
    static func connect(count: Int) async throws -> String {
        let central = try await GattFixture.central()
        let id = try GattFixture.id(1)
        try await central.connect(id).disconnect()  // a targeted scan finds it the first time
        let probe = WakeProbe.loaded(runsOnIOThread: GattFixture.runsOnCentral)
        let (phase, characteristics, wakes) = try await GattFixture.onCentral(central) {
            var phase = GattPhase(capacity: count)
            var wakes = WakeRecord()
            var characteristics = 0
            for _ in 0..<count {
                let start = Meter.monotonicNanoseconds()
                let woken = probe?.count ?? 0
                let peripheral = try await central.connect(id)
                characteristics = try await peripheral.discoverServices().reduce(0) { $0 + $1.characteristics.count }
                let end = Meter.monotonicNanoseconds()
                phase.latencies.append(end - start)
                if let probe {
                    wakes.afterWake.append(probe.afterLastWake(start: start, end: end))
                    wakes.wakeUps.append(probe.count - woken)
                }
                guard characteristics == 20 else {
                    throw BenchFailure(description: "\(characteristics) characteristics")
                }
                try await peripheral.disconnect()
            }
            phase.stop()
            return (phase, characteristics, wakes)
        }
        return phase.json(
            case: "connect", ops: count, extra: wakes.fields + [("characteristics", "\(characteristics)")])
    }

    /// Sequential reads of the 20- or 512-byte characteristic.
    static func read(size: Int, count: Int, warmup: Int) async throws -> String {
        guard size == 20 || size == 512 else { throw BenchFailure(description: "read SIZE is 20 or 512") }
        let central = try await GattFixture.central()
        let (peripheral, characteristic) = try await GattFixture.connectedCharacteristic(
            central, size == 20 ? GattFixture.read20 : GattFixture.read512)
        let phase = try await GattFixture.onCentral(central) {
            var phase = GattPhase(capacity: count)
            for index in -warmup..<count {
                if index == 0 { phase = GattPhase(capacity: count) }
                let start = Meter.monotonicNanoseconds()
                let value = try await characteristic.read()
                if index >= 0 { phase.latencies.append(Meter.monotonicNanoseconds() - start) }
                guard value.count == size else { throw BenchFailure(description: "read \(value.count) bytes") }
            }
            phase.stop()
            return phase
        }
        try await peripheral.disconnect()
        return phase.json(case: "read-\(size)", ops: count)
    }

    /// Sequential writes with response.
    static func write(size: Int, count: Int, warmup: Int) async throws -> String {
        let central = try await GattFixture.central()
        let (peripheral, characteristic) = try await GattFixture.connectedCharacteristic(central, GattFixture.write)
        let phase = try await GattFixture.onCentral(central) {
            var value = Data(count: size)
            var phase = GattPhase(capacity: count)
            for index in -warmup..<count {
                if index == 0 { phase = GattPhase(capacity: count) }
                value[0] = UInt8(truncatingIfNeeded: index)
                let start = Meter.monotonicNanoseconds()
                try await characteristic.write(value, type: .withResponse)
                if index >= 0 { phase.latencies.append(Meter.monotonicNanoseconds() - start) }
            }
            phase.stop()
            return phase
        }
        try await peripheral.disconnect()
        return phase.json(case: "write-\(size)", ops: count)
    }

    /// Writes without response, `window` tasks each awaiting its own writes (the SDK orders
    /// operations per peripheral, so this shows what pipelining the API allows).
    static func writeCommands(size: Int, count: Int, warmup: Int, window: Int) async throws -> String {
        let central = try await GattFixture.central()
        let (peripheral, characteristic) = try await GattFixture.connectedCharacteristic(central, GattFixture.write)
        let value = Data(count: size)
        let phase = try await GattFixture.onCentral(central) {
            _ = try await writeConcurrently(characteristic, value, count: warmup, window: window)
            var phase = GattPhase(capacity: count)
            phase.latencies = try await writeConcurrently(characteristic, value, count: count, window: window)
            phase.stop()
            return phase
        }
        try await peripheral.disconnect()
        let name = window == 1 ? "wcmd-\(size)" : "wcmd-\(size)-w\(window)"
        return phase.json(case: name, ops: count, extra: [("window", "\(window)")])
    }

    private static func writeConcurrently(_ characteristic: Characteristic, _ value: Data, count: Int, window: Int)
        async throws -> [UInt64]
    {
        try await measureInWorkers(count: count, window: window) {
            try await characteristic.write(value, type: .withoutResponse)
        }
    }

    /// Notifications of a stamped run from ble-sim, over D-Bus (`notifications`, StartNotify)
    /// or the AcquireNotify socket (`acquiredNotifications`).
    static func notify(acquired: Bool, count: Int, interval: Int, size: Int) async throws -> String {
        let remote = try await SimulatorRemote()
        var options = CentralOptions()
        options.notificationBufferSize = max(options.notificationBufferSize, count)
        let central = try await GattFixture.central(options: options)
        let (peripheral, characteristic) = try await GattFixture.connectedCharacteristic(central, GattFixture.notify)
        let address = GattFixture.address(1)
        let tally = PosixMutex(NotificationTally(count: count))
        let sequence: NotificationSequence
        if acquired {
            sequence = characteristic.acquiredNotifications
        } else {
            sequence = try await characteristic.subscribe()
        }
        let receiver = Task(executorPreference: GattFixture.receiverExecutor(central)) {
            for await value in sequence {
                let now = Meter.monotonicNanoseconds()
                if tally.withLock({ $0.receive(value, at: now) }) { break }
            }
        }
        if acquired {
            // The sequence acquires when iterated; a probe (too short to carry a stamp) tells
            // when the socket is up.
            while try await remote.notify(address: address, characteristic: GattFixture.notifyText, value: Data([0]))
                == 0
            {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        var phase = GattPhase(capacity: 0)
        let run = Task {
            try await remote.startNotifications(
                address: address, characteristic: GattFixture.notifyText, count: count, intervalMicroseconds: interval,
                size: size)
        }
        try await waitForValues(tally)
        receiver.cancel()
        phase.stop()
        try await run.value
        try await peripheral.disconnect()
        return notificationReport(
            phase, tally, transport: acquired ? "acquire" : "dbus", interval: interval, size: size,
            extra: [("dropped", "\(sequence.droppedCount)")])
    }

    /// The JSON line of a notification run: values counted once each, the wall time up to the
    /// last one, what was lost of those sent.
    static func notificationReport(
        _ phase: GattPhase, _ tally: borrowing PosixMutex<NotificationTally>, transport: String, interval: Int,
        size: Int, extra: [(String, String)], impl: String = "swift-ble"
    ) -> String {
        var phase = phase
        let result = tally.withLock { $0 }
        phase.latencies = result.latencies
        let wall = result.distinct > 0 ? Double(result.last - phase.wallStart) / 1e9 : nil
        let sent = result.seen.count
        return phase.json(
            case: "notify-\(transport)-\(interval == 0 ? "burst" : "paced")-\(size)", ops: result.distinct, wall: wall,
            extra: [
                ("sent", "\(sent)"), ("lost", "\(sent - result.distinct)"), ("interval_us", "\(interval)"),
                ("size", "\(size)"),
            ] + extra,
            impl: impl)
    }

    /// Returns once every value of the run has arrived, or after 2 s without a new one. Wakes
    /// only to notice either: a wait that woke every few milliseconds cost the measured phase
    /// wake-ups of its own (about 4 us per paced notification), where the floor's wait wakes
    /// only for messages.
    static func waitForValues(_ tally: borrowing PosixMutex<NotificationTally>) async throws {
        var idleSince = Meter.monotonicNanoseconds()
        var seen = 0
        while true {
            try await Task.sleep(for: .milliseconds(250))
            let (distinct, done) = tally.withLock { ($0.distinct, $0.distinct == $0.seen.count) }
            if done { return }
            if distinct != seen {
                seen = distinct
                idleSince = Meter.monotonicNanoseconds()
            } else if Meter.monotonicNanoseconds() - idleSince > 2_000_000_000 {
                return
            }
        }
    }

    /// Scan until `count` distinct advertisers were reported.
    static func scan(count: Int) async throws -> String {
        var options = CentralOptions()
        // Every advertiser of the crowd is reported in one scan tick; the default buffer (1,024)
        // would drop most of them until the next round of adverts.
        options.scanBufferSize = max(options.scanBufferSize, count)
        let central = try await GattFixture.central(options: options)
        let scan = central.scan()
        let phase = try await GattFixture.onCentral(central) {
            var seen = Set<PeripheralID>()
            seen.reserveCapacity(count)
            var phase = GattPhase(capacity: 1)
            for try await discovery in scan {
                seen.insert(discovery.id)
                if seen.count == count { break }
            }
            phase.latencies.append(Meter.monotonicNanoseconds() - phase.wallStart)
            phase.stop()
            return phase
        }
        return phase.json(case: "scan-\(count)", ops: count, extra: [("dropped", "\(scan.droppedCount)")])
    }

    /// Connects peripherals 1…max(counts) one after the other, discovering each one's
    /// services, and records the resident memory at each count.
    static func memory(counts: [Int]) async throws -> String {
        let total = counts.max() ?? 0
        guard total >= 1 else { throw BenchFailure(description: "memory counts are ≥ 1") }
        let central = try await GattFixture.central()
        let wanted = Set(try (1...total).map { index throws(BLEError) in try GattFixture.id(index) })
        let known = Set(await central.knownPeripherals().map(\.id))
        if !wanted.isSubset(of: known) {
            var missing = wanted.subtracting(known)
            for try await discovery in central.scan() {
                missing.remove(discovery.id)
                if missing.isEmpty { break }
            }
        }
        let base = MemoryMeter.residentKilobytes()
        let (phase, peripherals, resident, cpu) = try await GattFixture.onCentral(central) {
            var phase = GattPhase(capacity: total)
            var peripherals: [Peripheral] = []
            var resident: [Int: Int] = [:]
            var cpu: [UInt64] = []
            for index in 1...total {
                let start = Meter.monotonicNanoseconds()
                let cpuStart = Meter.cpuNanoseconds()
                let peripheral = try await central.connect(try GattFixture.id(index))
                _ = try await peripheral.discoverServices()
                cpu.append(Meter.cpuNanoseconds() - cpuStart)
                phase.latencies.append(Meter.monotonicNanoseconds() - start)
                peripherals.append(peripheral)
                if counts.contains(index) { resident[index] = MemoryMeter.residentKilobytes() }
            }
            phase.stop()
            return (phase, peripherals, resident, cpu)
        }
        for peripheral in peripherals { try await peripheral.disconnect() }
        let at = counts.map { "\"\($0)\":\(resident[$0] ?? 0)" }.joined(separator: ",")
        return phase.json(
            case: "memory", ops: total,
            extra: [
                ("rss_base_kb", "\(base)"), ("rss_at", "{\(at)}"),
                ("lat_at", perConnection(phase.latencies, at: counts)), ("cpu_at", perConnection(cpu, at: counts)),
            ])
    }

    /// For each count N, the median (µs) over the 5 connections ending at connection N
    /// (connections 1–5 for N < 5), as a JSON object: what connection N cost.
    private static func perConnection(_ nanoseconds: [UInt64], at counts: [Int]) -> String {
        let fields = counts.map { count -> String in
            let end = min(max(count, 5), nanoseconds.count)
            let window = nanoseconds[max(0, end - 5)..<end].sorted()
            let median = window.isEmpty ? 0 : Double(window[(window.count - 1) / 2]) / 1e3
            return "\"\(count)\":\(String(format: "%.1f", median))"
        }
        return "{" + fields.joined(separator: ",") + "}"
    }
}

/// What a notification run received: distinct sequence numbers, their latencies from the
/// stamp, and when the last new one came.
struct NotificationTally: Sendable {
    var seen: [Bool]
    var distinct = 0
    var last: UInt64 = 0
    var latencies: [UInt64] = []

    init(count: Int) {
        seen = Array(repeating: false, count: count)
        latencies.reserveCapacity(count)
    }

    /// Records a value; true once every sequence number has arrived.
    mutating func receive(_ value: Data, at now: UInt64) -> Bool {
        guard value.count >= 12 else { return false }
        // Two little-endian loads, what the floor's byte loops compile to: the same loops here,
        // over variables the closure captures, cost three dynamic exclusivity checks per value,
        // which the floor does not pay.
        let (stamp, sequence) = value.withUnsafeBytes { raw in
            (
                UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)),
                UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            )
        }
        let slot = Int(sequence)
        guard slot < seen.count, !seen[slot] else { return false }
        seen[slot] = true
        distinct += 1
        last = now
        latencies.append(now &- stamp)
        return distinct == seen.count
    }
}
