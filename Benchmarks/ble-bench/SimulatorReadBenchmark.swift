import BlueZ
import DBus
import Foundation

/// GATT reads served by ble-sim, measured from a raw D-Bus client: discovery, Connect, then
/// sequential `ReadValue` calls on one characteristic. Prints the same JSON line as the
/// method-call benchmark, so the runner can set it beside the C echo server.
struct SimulatorReadBenchmark {
    let connection: Connection

    init() async throws {
        connection = try await Connection(bus: .system)
    }

    /// Finds the first device, connects, and returns the path of a readable characteristic.
    func prepare() async throws -> ObjectPath {
        try await prepare { characteristic in
            guard case .array(_, let flags)? = characteristic["Flags"] else { return false }
            return flags.contains(.string("read"))
        }
    }

    /// Finds the first device, connects, and returns the path of its first characteristic (in
    /// path order) whose `GattCharacteristic1` properties `matches` accepts.
    func prepare(characteristic matches: ([String: DBusValue]) -> Bool) async throws -> ObjectPath {
        let adapter = try ObjectPath("/org/bluez/hci0")
        let added = try await connection.signals(
            matchingAny: [MatchRule(sender: BlueZService.busName, interface: .objectManager)], buffering: .unbounded)
        _ = try await connection.call(
            destination: BlueZService.busName, path: adapter, interface: BlueZInterface.adapter1,
            member: BlueZMethod.startDiscovery)
        // A device bluetoothd knows already (an earlier client found it) is not added again.
        let known = try await connection.call(
            destination: BlueZService.busName, path: .root, interface: .objectManager,
            member: BlueZMethod.getManagedObjects)
        let objects: [ObjectPath: [String: [String: DBusValue]]] = try known.argument(0)
        var device = objects.keys.sorted().first { objects[$0]?["org.bluez.Device1"] != nil }
        if device == nil {
            for await message in added {
                guard message.member?.rawValue == "InterfacesAdded", case .objectPath(let path)? = message.body.first,
                    path.elements.count == 4
                else { continue }
                device = path
                break
            }
        }
        guard let device else { throw DBusError(.invalidValue, message: "no device appeared") }
        _ = try await connection.call(
            destination: BlueZService.busName, path: adapter, interface: BlueZInterface.adapter1,
            member: BlueZMethod.stopDiscovery)
        _ = try await connection.call(
            destination: BlueZService.busName, path: device, interface: BlueZInterface.device1,
            member: BlueZMethod.connect)
        for _ in 0..<500 {
            let reply = try await connection.call(
                destination: BlueZService.busName, path: .root, interface: .objectManager,
                member: BlueZMethod.getManagedObjects)
            let objects: [ObjectPath: [String: [String: DBusValue]]] = try reply.argument(0)
            let found = objects.keys.sorted().first { path in
                guard path.isDescendant(of: device),
                    let characteristic = objects[path]?["org.bluez.GattCharacteristic1"]
                else { return false }
                return matches(characteristic)
            }
            if let found { return found }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw DBusError(.invalidValue, message: "no such characteristic")
    }

    /// `server`, when given, is a service and characteristic path to read straight away (the
    /// C floor's ReadValue), so the floor and ble-sim are measured with the same client.
    /// `paired`, when given, is read right after every read of ble-sim: both servers then serve
    /// the same client, call for call, under the same load (the second report, first printed).
    func run(
        count: Int, warmup: Int, server: (name: BusName, path: ObjectPath)? = nil,
        paired: (name: BusName, path: ObjectPath)? = nil
    ) async throws -> [CallReport] {
        let destination = server?.name ?? BlueZService.busName
        let path: ObjectPath
        if let server { path = server.path } else { path = try await prepare() }
        let options = DBusValue.dictionary(key: .string, value: .variant, [])
        func read(_ destination: BusName, _ path: ObjectPath) async throws {
            let reply = try await connection.call(
                destination: destination, path: path, interface: BlueZInterface.gattCharacteristic1,
                member: BlueZMethod.readValue, arguments: [options])
            guard case .bytes? = reply.body.first else { throw DBusError(.typeMismatch, message: "ReadValue reply") }
        }
        for _ in 0..<warmup {
            try await read(destination, path)
            if let paired { try await read(paired.name, paired.path) }
        }
        var latencies: [UInt64] = []
        var pairedLatencies: [UInt64] = []
        latencies.reserveCapacity(count)
        pairedLatencies.reserveCapacity(paired == nil ? 0 : count)
        let meter = Meter()
        for _ in 0..<count {
            let start = Meter.monotonicNanoseconds()
            try await read(destination, path)
            latencies.append(Meter.monotonicNanoseconds() - start)
            if let paired {
                let pairedStart = Meter.monotonicNanoseconds()
                try await read(paired.name, paired.path)
                pairedLatencies.append(Meter.monotonicNanoseconds() - pairedStart)
            }
        }
        let report = meter.report(mode: "sim-read", size: 0, count: count, window: 1, latencies: latencies)
        guard paired != nil else { return [report] }
        return [meter.report(mode: "sim-read", size: 1, count: count, window: 1, latencies: pairedLatencies), report]
    }
}
