import BLE
import Foundation
import Synchronization

/// `ble-bench l2cap BYTES ROUNDS`: GATT writes without response against an L2CAP channel on the
/// same link, through the kernel and the real bluetoothd: run inside the real-BlueZ guest
/// (Tests/RealBlueZ, two btvirt controllers), with our PeripheralManager on hci1 and our
/// Central on hci0 in this one process. Each round sends BYTES over GATT (writes of 244 bytes),
/// then over the channel (SDUs of 244 bytes, then of the channel's 4,096-byte MTU), each timed
/// until the manager holds the last byte. One JSON line per round and transport.
///
/// btvirt has no radio: the figures are what the host stack costs (bluetoothd, D-Bus and the
/// kernel for GATT; the kernel alone for L2CAP), not what an air interface allows.
enum L2CAPThroughput {
    static let service = BluetoothUUID("5b1e2001-6d2c-4f4e-9a61-2f3b0c7d8e90")
    static let sink = BluetoothUUID("5b1e2002-6d2c-4f4e-9a61-2f3b0c7d8e90")
    static let channelMTU: UInt16 = 4096
    static let gattChunk = 244

    static func run(bytes: Int, rounds: Int) async throws -> [String] {
        let manager = try await PeripheralManager(adapter: "hci1")
        try await manager.waitUntilPoweredOn(timeout: .seconds(20))
        let received = ByteCounter()
        let serving = Task {
            for await request in manager.requests {
                if request.kind == .write { received.add(request.value.count) }
                _ = request.respond()
            }
        }
        defer { serving.cancel() }
        try await manager.add(
            MutableService(
                uuid: service,
                characteristics: [MutableCharacteristic(uuid: sink, properties: [.writeWithoutResponse])]))
        try await manager.startAdvertising(Advertisement(localName: "l2cap-bench", serviceUUIDs: [service]))
        var channelOptions = L2CAPChannelOptions()
        channelOptions.receiveMTU = channelMTU
        let publication = try await manager.publishL2CAPChannel(options: channelOptions)

        let central = try await Central(adapter: "hci0")
        try await central.waitUntilPoweredOn(timeout: .seconds(20))
        let peripheral = try await connect(central)
        let characteristic = try await peripheral.characteristic(sink, in: service)
        // 244 bytes, the most a 247-byte MTU (a phone's usual) carries. Not the link's 514:
        // with btvirt, bluetoothd 5.66 took a 514-byte write command, the peer received it cut
        // to 482 bytes and lost the writes after it.
        let chunk = min(await peripheral.maximumWriteLength(for: .withoutResponse), gattChunk)
        var accepted = publication.channels.makeAsyncIterator()
        let channel = try await peripheral.openL2CAPChannel(psm: publication.psm, options: channelOptions)
        guard let server = await accepted.next() else { throw BenchFailure(description: "no channel accepted") }
        let reading = Task {
            for await sdu in server.incoming { received.add(sdu.count) }
        }
        defer { reading.cancel() }

        var lines: [String] = []
        for round in 1...rounds {
            lines.append(
                try await measure("gatt-wcmd", round: round, size: chunk, bytes: bytes, received: received) { data in
                    try await characteristic.write(data, type: .withoutResponse)
                })
            for size in [chunk, channel.sendMTU] {
                lines.append(
                    try await measure("l2cap", round: round, size: size, bytes: bytes, received: received) { data in
                        try await channel.send(data)
                    })
            }
        }
        channel.close()
        try await peripheral.disconnect()
        await central.close()
        await manager.close()
        return lines
    }

    /// Sends `bytes` in pieces of `size` and waits until the manager received them all.
    private static func measure(
        _ transport: String, round: Int, size: Int, bytes: Int, received: ByteCounter,
        send: (Data) async throws -> Void
    ) async throws -> String {
        let piece = Data((0..<size).map { UInt8(truncatingIfNeeded: $0) })
        let start = received.value
        let meter = Meter()
        var sent = 0
        while sent < bytes {
            let count = min(size, bytes - sent)
            try await send(count == size ? piece : piece.prefix(count))
            sent += count
        }
        // Woken by the byte that completes the run, not by polling: a poll's wake-ups would be
        // counted in the measured CPU.
        guard await received.wait(until: start + bytes, within: .seconds(60)) else {
            throw BenchFailure(description: "\(transport): \(received.value - start) of \(bytes) bytes arrived")
        }
        let wall = Double(Meter.monotonicNanoseconds() - meter.wallStart) / 1e9
        let cpu = Double(Meter.cpuNanoseconds() - meter.cpuStart) / 1e9
        let kib = Double(bytes) / 1024
        return """
            {"impl":"swift-ble","case":"\(transport)","round":\(round),"size":\(size),"bytes":\(bytes),\
            "wall_s":\(String(format: "%.3f", wall)),"kib_per_s":\(String(format: "%.1f", kib / wall)),\
            "cpu_ms_per_mib":\(String(format: "%.1f", cpu * 1000 / (kib / 1024)))}
            """
    }

    /// Connects to the manager on hci1, scanning until the connection is made (bluetoothd
    /// drops a temporary device it stops seeing).
    private static func connect(_ central: Central) async throws -> Peripheral {
        let scan = central.scan(services: [service])
        let (found, seen) = AsyncStream<PeripheralID>.makeStream()
        let scanning = Task {
            defer { seen.finish() }
            for try await discovery in scan { seen.yield(discovery.id) }
        }
        defer { scanning.cancel() }
        for await id in found {
            return try await central.connect(id, timeout: .seconds(30))
        }
        throw BenchFailure(description: "the scan ended before the manager was found")
    }
}

/// Bytes received so far, counted from the manager's tasks, and one waiter for a total.
final class ByteCounter: Sendable {
    private struct State {
        var count = 0
        var waiter: (total: Int, continuation: CheckedContinuation<Bool, Never>)?
        /// Numbers the waits, so that a wait's timer cannot expire a later one.
        var wait = 0
    }

    private let state = Mutex(State())

    func add(_ bytes: Int) {
        let reached = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            state.count += bytes
            guard let waiter = state.waiter, state.count >= waiter.total else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        reached?.resume(returning: true)
    }

    var value: Int { state.withLock { $0.count } }

    /// Waits until `total` bytes arrived (true), or `timeout` passed first (false).
    func wait(until total: Int, within timeout: Duration) async -> Bool {
        await withCheckedContinuation { continuation in
            let wait = state.withLock { state -> Int? in
                if state.count >= total { return nil }
                state.waiter = (total, continuation)
                state.wait += 1
                return state.wait
            }
            guard let wait else { return continuation.resume(returning: true) }
            let (seconds, attoseconds) = timeout.components
            let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
                let expired = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                    guard state.wait == wait, let waiter = state.waiter else { return nil }
                    state.waiter = nil
                    return waiter.continuation
                }
                expired?.resume(returning: false)
            }
        }
    }
}
