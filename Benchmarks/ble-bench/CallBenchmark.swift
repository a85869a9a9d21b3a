import DBus
import Foundation

/// Echo calls against the floor's server, sequential or with a window in flight.
struct CallBenchmark {
    let connection: Connection
    let destination: BusName
    let path: ObjectPath
    let interface: InterfaceName
    let member: MemberName

    init() async throws {
        connection = try await Connection(bus: .system)
        destination = try BusName("org.swiftble.Bench")
        path = try ObjectPath("/org/swiftble/Bench")
        interface = try InterfaceName("org.swiftble.Bench1")
        member = try MemberName("Echo")
    }

    func echo(_ payload: Data) async throws {
        let reply = try await connection.call(
            destination: destination, path: path, interface: interface, member: member,
            arguments: [.bytes(payload)])
        guard case .bytes(let echoed)? = reply.body.first, echoed.count == payload.count else {
            throw DBusError(.typeMismatch, message: "echo returned something else")
        }
    }

    func sequential(size: Int, count: Int, warmup: Int) async throws -> CallReport {
        let payload = Data(repeating: 0xA5, count: size)
        for _ in 0..<warmup { try await echo(payload) }
        var latencies: [UInt64] = []
        latencies.reserveCapacity(count)
        let meter = Meter()
        for _ in 0..<count {
            let start = Meter.monotonicNanoseconds()
            try await echo(payload)
            latencies.append(Meter.monotonicNanoseconds() - start)
        }
        return meter.report(mode: "seq", size: size, count: count, window: 1, latencies: latencies)
    }

    func pipelined(size: Int, count: Int, window: Int, warmup: Int) async throws -> CallReport {
        let payload = Data(repeating: 0xA5, count: size)
        try await run(payload, count: warmup, window: window)
        let meter = Meter()
        let latencies = try await run(payload, count: count, window: window)
        return meter.report(mode: "pipe", size: size, count: count, window: window, latencies: latencies)
    }

    /// `window` workers each keep one call in flight until `count` calls are done.
    @discardableResult
    private func run(_ payload: Data, count: Int, window: Int) async throws -> [UInt64] {
        try await measureInWorkers(count: count, window: window) { try await echo(payload) }
    }
}
