import BLESimulator
import DBusTestSupport
import Foundation
import Testing

@testable import BLECommandLine

/// `ble serve` against the simulator's remote central: publish, advertise, answer, notify, and
/// unpublish at Ctrl-C.
@Suite(.serialized) struct ServeCommandTests {
    static let spec = #"""
        {
          "name": "CLI served",
          "advertise": { "services": ["180D"], "manufacturerData": { "0xFFFF": { "hex": "0102" } } },
          "services": [
            { "uuid": "180D", "characteristics": [
              { "uuid": "2A37", "properties": ["notify"], "value": { "hex": "0048" },
                "notify": { "intervalMs": 20, "values": [{ "hex": "0048" }, { "hex": "004a" }] } },
              { "uuid": "2A38", "properties": ["read"], "value": { "uint8": 1 },
                "descriptors": [{ "uuid": "2901", "value": { "utf8": "where" } }] },
              { "uuid": "2A39", "properties": ["read", "write"], "value": { "uint8": 0 } },
              { "uuid": "2A3A", "properties": ["read", "write"], "onWrite": "reject" }
            ] }
          ]
        }
        """#

    private func withSpec<R>(_ body: (String) async throws -> R) async throws -> R {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ble-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("spec.json")
        try Data(Self.spec.utf8).write(to: file)
        return try await body(file.path)
    }

    @Test func servesARemoteCentralUntilCtrlC() async throws {
        try await withSpec { path in
            try await CLIFixture.run(peripherals: []) { fixture in
                let simulator = fixture.simulator
                let process = try ToolProcess(["serve"] + fixture.busArguments + [path])
                try await process.waitUntil("serving") { _, errors in errors.contains("serving \"CLI served\"") }
                #expect(simulator.registeredApplications.count == 1)
                #expect(simulator.advertisements.count == 1)

                #expect(try await simulator.remoteRead(characteristic: "2A38") == Data([1]))
                #expect(try await simulator.remoteRead(descriptor: "2901", of: "2A38") == Data("where".utf8))
                try await simulator.remoteWrite(Data([5, 6]), to: "2A39")
                #expect(try await simulator.remoteRead(characteristic: "2A39") == Data([5, 6]))
                await #expect(throws: RemoteCentralError.self) {
                    try await simulator.remoteWrite(Data([1]), to: "2A3A")
                }

                var notifications = simulator.notifications(for: "2A37").makeAsyncIterator()
                try await simulator.remoteSubscribe(to: "2A37")
                let first = await notifications.next()
                #expect([Data([0x00, 0x48]), Data([0x00, 0x4A])].contains(first?.value ?? Data()))

                process.send(SIGINT)
                let outcome = try await process.finish()
                #expect(outcome.status == 0, "\(outcome.errors)")
                #expect(outcome.output.contains("read 2A38"))
                #expect(outcome.output.contains("write 2A39"))
                #expect(outcome.output.contains("write 2A3A"))
                #expect(outcome.output.contains("subscribed to 2A37"))
                #expect(outcome.errors.contains("stopped advertising; services unpublished"))
                #expect(simulator.registeredApplications.isEmpty)
                #expect(simulator.advertisements.isEmpty)
            }
        }
    }

    @Test func serveWithoutBluetoothd() async throws {
        try await withSpec { path in
            let bus = try DBusTestSupport.TestBus()
            defer { bus.stop() }
            let outcome = try await ToolProcess.run(["serve", "--bus", bus.address, path])
            #expect(outcome.status == ExitCode.bluetoothUnavailable)
            #expect(
                outcome.errors
                    == "ble serve: error: bluetoothd is not running on bus \(bus.address) (bluetoothUnavailable)\n")
        }
    }
}
