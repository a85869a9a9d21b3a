import BLE
import BLESimulator
import DBus
import DBusTestSupport
import Foundation
import Testing

/// Another client that set a discovery filter leaving the bus makes bluetoothd say
/// `Discovering=false` (`discovery_disconnect` → `discovery_stop`, 5.66 and later): while a
/// scan's StartDiscovery is pending that is a stray the start's own `Discovering=true`
/// follows; while the scan discovers alone, bluetoothd has stopped the discovery under it.
@Suite("Scan: Discovering=false the scan did not cause")
struct ScanStrayDiscoveringTests {
    private static let filter = DBusValue.dictionary(
        key: .string, value: .variant, [DBusDictionaryEntry(.string("Transport"), .variant(.string("le")))])

    /// A client with a filter and no discovery, as a finished `ble scan` leaves one behind.
    private static func filterClient(_ fixture: SimulatorFixture) async throws -> BusProbe {
        let probe = try await BusProbe.open(fixture)
        try await probe.call(SimPath.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [filter])
        return probe
    }

    /// With manufacturer data, every advertisement is a change under DuplicateData: the scan
    /// reports as long as the discovery runs.
    private static let beacon = TestPeripherals.advertiser("C4:00:00:00:0B:01", name: "Beacon")

    private static func isDiscoveringSignal(_ message: DBusMessage, _ value: Bool) -> Bool {
        guard message.member?.rawValue == "PropertiesChanged", message.body.count == 3,
            case .dictionary(_, _, let entries) = message.body[1]
        else { return false }
        return entries.contains { $0.key == .string("Discovering") && $0.value.unwrappingVariant == .boolean(value) }
    }

    @Test("a stray before the StartDiscovery reply neither ends the scan nor restarts the discovery")
    func strayBeforeTheStartReply() async throws {
        try await SimulatorFixture.run(peripherals: [Self.beacon]) { fixture in
            let recorder = LogRecorder()
            let central = try await fixture.poweredCentral(options: tracing(recorder))
            let leaving = try await Self.filterClient(fixture)
            let monitor = try BusMonitor(bus: .address(fixture.bus.address))
            defer { monitor.stop() }
            // The kernel is slow to confirm the start: the other client leaves meanwhile.
            fixture.simulator.inject(SimulatedFault(.startDiscovery, action: .delay(.seconds(2))))
            let reports = PosixMutex(0)
            let scan = Task {
                for try await _ in central.scan(options: ScanOptions(allowDuplicates: true)) {
                    reports.withLock { $0 += 1 }
                }
            }
            try await eventually("the scan's StartDiscovery reaches the bus") {
                monitor.messages.contains { $0.kind == .methodCall && $0.member?.rawValue == "StartDiscovery" }
            }
            leaving.close()
            try await eventually("the scan reports") { reports.withLock { $0 } > 0 }
            let seen = monitor.messages
            let call = try #require(seen.first { $0.kind == .methodCall && $0.member?.rawValue == "StartDiscovery" })
            let reply = try #require(
                seen.firstIndex { $0.kind == .methodReturn && $0.replySerial == call.serial })
            let stray = try #require(seen.firstIndex { Self.isDiscoveringSignal($0, false) }, "the stray was sent")
            #expect(stray < reply, "the stray came before the start's reply")
            #expect(seen[reply...].contains { Self.isDiscoveringSignal($0, true) })
            #expect(recorder.count("Adapter1.StartDiscovery") == 1, "no restart")
            #expect(recorder.count("Adapter1.StopDiscovery") == 0)
            scan.cancel()
            _ = await scan.result
            await central.close()
        }
    }

    @Test("the discovery stopped under a lone scan is started again, and the scan goes on reporting")
    func discoveryStoppedUnderTheScan() async throws {
        try await SimulatorFixture.run(peripherals: [Self.beacon]) { fixture in
            let recorder = LogRecorder()
            let central = try await fixture.poweredCentral(options: tracing(recorder))
            let leaving = try await Self.filterClient(fixture)
            let reports = PosixMutex(0)
            let scan = Task {
                for try await _ in central.scan(options: ScanOptions(allowDuplicates: true)) {
                    reports.withLock { $0 += 1 }
                }
            }
            try await eventually("the scan reports") { reports.withLock { $0 } > 0 }
            leaving.close()
            // bluetoothd stopped the kernel's discovery; the central stops its dead session and
            // starts a new one.
            try await recorder.waitFor("StopDiscovery -> ", suffix: true)
            try await recorder.waitFor("StartDiscovery -> ", suffix: true, occurrence: 2)
            let restarted = reports.withLock { $0 }
            try await eventually("the scan reports after the restart") { reports.withLock { $0 } > restarted }
            let probe = try await BusProbe.open(fixture)
            #expect(try await probe.property(SimPath.adapter, "org.bluez.Adapter1", "Discovering") == .boolean(true))
            probe.close()
            scan.cancel()
            _ = await scan.result
            await central.close()
        }
    }

    @Test("a restart bluetoothd refuses ends the scan with the error, and is not asked again")
    func refusedRestartEndsTheScan() async throws {
        try await SimulatorFixture.run(peripherals: [Self.beacon]) { fixture in
            let recorder = LogRecorder()
            let central = try await fixture.poweredCentral(options: tracing(recorder))
            let leaving = try await Self.filterClient(fixture)
            let reports = PosixMutex(0)
            let ended = PosixMutex<BLEError?>(nil)
            let scan = Task {
                do {
                    for try await _ in central.scan(options: ScanOptions(allowDuplicates: true)) {
                        reports.withLock { $0 += 1 }
                    }
                } catch {
                    ended.withLock { $0 = (error as? BLEError) ?? BLEError(.protocolError, message: "\(error)") }
                }
            }
            try await eventually("the scan reports") { reports.withLock { $0 } > 0 }
            fixture.simulator.inject(
                SimulatedFault(
                    .startDiscovery, action: .fail(name: "org.bluez.Error.NotReady", message: "Resource Not Ready"),
                    count: nil))
            leaving.close()
            // Before, the refused start was made again at once, for as long as it was refused.
            try await eventually(within: .seconds(30), "the scan ended") { ended.withLock { $0 } != nil }
            let error = ended.withLock { $0 }
            #expect(error?.dbusErrorName == "org.bluez.Error.NotReady", "ended with \(String(describing: error))")
            scan.cancel()
            _ = await scan.result
            // A round trip after the end: a start sent again would be on the log before its answer.
            try await handledByBluetoothd(central)
            #expect(recorder.count("Adapter1.StartDiscovery") == 2, "the first start, and the refused one")
            await central.close()
        }
    }
}
