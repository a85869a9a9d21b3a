import BLESimulator
import BlueZ
import DBusTestSupport
import Foundation
import Testing

@testable import BLE

/// `Central.connect(_:timeout:)`: failures, deadlines, cancellation, shared attempts, and
/// peripherals that are not advertising.
@Suite("Connecting", .timeLimit(.minutes(1)))
struct ConnectTests {
    static let hrm = SimulatorFixture.heartRateAddress

    /// Scans until BlueZ knows the monitor, so a short connect deadline is spent on the
    /// Connect itself rather than on finding it.
    static func discoverMonitor(_ central: Central) async throws -> PeripheralID {
        let discovery = try #require(try await first(central.scan()) { $0.id.address == hrm })
        return discovery.id
    }

    struct Failure: Sendable, CustomTestStringConvertible {
        var name: String
        var message: String
        var code: BLEError.Code
        var testDescription: String { "\(name.split(separator: ".").last ?? "") \"\(message)\" → \(code)" }
    }

    static let failures: [Failure] = [
        Failure(
            name: BlueZErrorName.failed, message: BlueZErrorMessage.leConnectionAbortByLocal, code: .connectionFailed),
        Failure(name: BlueZErrorName.failed, message: BlueZErrorMessage.leConnectionTimeout, code: .connectionFailed),
        Failure(name: BlueZErrorName.failed, message: BlueZErrorMessage.bredrConnectionCanceled, code: .cancelled),
        Failure(name: BlueZErrorName.notReady, message: BlueZErrorMessage.notReady, code: .poweredOff),
        Failure(name: BlueZErrorName.inProgress, message: BlueZErrorMessage.inProgress, code: .inProgress),
        Failure(name: BlueZErrorName.doesNotExist, message: BlueZErrorMessage.doesNotExist, code: .notFound),
        Failure(name: BlueZErrorName.notSupported, message: BlueZErrorMessage.notSupported, code: .notSupported),
        Failure(
            name: BlueZErrorName.authenticationFailed, message: BlueZErrorMessage.authenticationFailed,
            code: .authenticationFailed),
    ]

    @Test("a refused Connect fails with the mapped code, raw name and message kept", arguments: failures)
    func connectFailure(_ failure: Failure) async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            let id = try PeripheralID(address: Self.hrm)
            fixture.simulator.inject(
                SimulatedFault(.connect, address: Self.hrm, action: .fail(name: failure.name, message: failure.message))
            )
            let error = try #require(await bleError { try await central.connect(id, timeout: .seconds(10)) })
            #expect(error.code == failure.code)
            #expect(error.dbusErrorName == failure.name)
            #expect(error.message == failure.message)
            // Nothing is left behind: the next attempt connects.
            let peripheral = try await central.connect(id, timeout: .seconds(10))
            #expect(await peripheral.isConnected)
            #expect(fixture.simulator.statistics.connections == 1)
            await central.close()
        }
    }

    /// A beacon that advertises and does not accept connections.
    static func nonConnectable(_ address: String) -> VirtualPeripheral {
        var beacon = TestPeripherals.advertiser(address, name: "Beacon")
        beacon.connectable = false
        return beacon
    }

    @Test("a peripheral that does not accept connections fails with connectionFailed")
    func notConnectable() async throws {
        try await SimulatorFixture.run(peripherals: [Self.nonConnectable("D1:00:00:00:00:42")]) { fixture in
            let central = try await fixture.poweredCentral()
            let error = await bleError {
                try await central.connect(try PeripheralID(address: "D1:00:00:00:00:42"), timeout: .seconds(10))
            }
            #expect(error?.code == .connectionFailed)
            #expect(error?.message == BlueZErrorMessage.leConnectionAbortByLocal)
            #expect(error?.isTransient == true)
            await central.close()
        }
    }

    @Test("the targeted scan that found a peripheral runs until its Connect is answered")
    func targetedScanOutlastsTheConnect() async throws {
        try await SimulatorFixture.run(peripherals: [Self.nonConnectable("D1:00:00:00:00:43")]) { fixture in
            let central = try await fixture.poweredCentral()
            let monitor = try BusMonitor(bus: .address(fixture.bus.address))
            defer { monitor.stop() }
            _ = await bleError {
                try await central.connect(try PeripheralID(address: "D1:00:00:00:00:43"), timeout: .seconds(10))
            }
            try await eventually("the targeted scan stops once the connect is over") {
                monitor.messages.contains { $0.kind == .methodCall && $0.member?.rawValue == "StopDiscovery" }
            }
            let seen = monitor.messages
            func call(_ member: String) -> Int? {
                seen.firstIndex { $0.kind == .methodCall && $0.member?.rawValue == member }
            }
            let connect = try #require(call("Connect"))
            let serial = seen[connect].serial
            let answer = try #require(seen.firstIndex { $0.kind != .methodCall && $0.replySerial == serial })
            let stop = try #require(call("StopDiscovery"))
            // Stopped earlier, bluetoothd drops the device it just created (a non-connectable
            // one at once) and the connect fails with notFound instead of bluetoothd's error.
            #expect(answer < stop, "StopDiscovery only after the Connect was answered")
            await central.close()
        }
    }

    @Test("a Connect slower than the deadline times out and is cancelled with Disconnect")
    func timeout() async throws {
        try await SimulatorFixture.run { fixture in
            let recorder = LogRecorder()
            let central = try await fixture.poweredCentral(options: tracing(recorder))
            let id = try await Self.discoverMonitor(central)
            // The link would come up 30 s later: far past the 150 ms deadline even on a loaded
            // machine, so the Disconnect below always finds the Connect pending.
            fixture.simulator.inject(SimulatedFault(.connect, address: Self.hrm, action: .delay(.seconds(30))))
            let error = await bleError { try await central.connect(id, timeout: .milliseconds(150)) }
            #expect(error?.code == .timeout)
            // Ended by its deadline, not by the Connect's answer: the link has not come up.
            #expect(fixture.simulator.statistics.connections == 0, "before the delayed Connect was answered")
            try await recorder.waitFor("Disconnect -> ", suffix: true)
            let probe = try await BusProbe.open(fixture)
            #expect(
                try await probe.property(SimPath.device(Self.hrm), "org.bluez.Device1", "Connected") == .boolean(false))
            // Were the first Connect still pending, bluetoothd would refuse this one (in progress);
            // it succeeds, and the link comes up once: the first attempt never completed.
            let peripheral = try await central.connect(id, timeout: .seconds(10))
            #expect(await peripheral.isConnected)
            #expect(fixture.simulator.statistics.connections == 1)
            probe.close()
            await central.close()
        }
    }

    @Test("a Connect never answered times out; nothing stays half-open")
    func noReplyTimeout() async throws {
        try await SimulatorFixture.run { fixture in
            let recorder = LogRecorder()
            let central = try await fixture.poweredCentral(options: tracing(recorder))
            let id = try await Self.discoverMonitor(central)
            fixture.simulator.inject(SimulatedFault(.connect, address: Self.hrm, action: .noReply))
            let error = await bleError { try await central.connect(id, timeout: .milliseconds(200)) }
            #expect(error?.code == .timeout)
            #expect(error?.isTransient == true)
            try await recorder.waitFor("Disconnect -> ", suffix: true)
            let peripheral = try await central.connect(id, timeout: .seconds(10))
            #expect(await peripheral.state == .connected)
            #expect(fixture.simulator.statistics.connections == 1)
            await central.close()
        }
    }

    @Test("cancelling the connecting task cancels the Connect")
    func cancellation() async throws {
        try await SimulatorFixture.run { fixture in
            let recorder = LogRecorder()
            let central = try await fixture.poweredCentral(options: tracing(recorder))
            let id = try PeripheralID(address: Self.hrm)
            fixture.simulator.inject(SimulatedFault(.connect, address: Self.hrm, action: .noReply))
            // A deadline of an hour and a Connect never answered: within the suite's time limit,
            // only the cancellation can end the attempt (one that waited for its deadline would
            // report cancelled too, so the code alone would not tell).
            let attempt = Task { try await central.connect(id, timeout: .seconds(3600)) }
            try await recorder.waitFor("Device1.Connect")
            try await handledByBluetoothd(central)
            attempt.cancel()
            let error = await bleError { try await attempt.value }
            #expect(error?.code == .cancelled)
            try await recorder.waitFor("Disconnect -> ", suffix: true)
            let peripheral = try await central.connect(id, timeout: .seconds(10))
            #expect(await peripheral.isConnected)
            #expect(fixture.simulator.statistics.connections == 1)
            await central.close()
        }
    }

    @Test("concurrent connects to one peripheral share one attempt")
    func concurrentConnectsShareOneAttempt() async throws {
        try await SimulatorFixture.run { fixture in
            let recorder = LogRecorder()
            let central = try await fixture.poweredCentral(options: tracing(recorder))
            let id = try PeripheralID(address: Self.hrm)
            fixture.simulator.inject(SimulatedFault(.connect, address: Self.hrm, action: .delay(.milliseconds(200))))
            let peripherals = try await withThrowingTaskGroup(of: Peripheral.self) { group in
                for _ in 0..<5 { group.addTask { try await central.connect(id, timeout: .seconds(10)) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(peripherals.count == 5)
            #expect(peripherals.allSatisfy { $0 === peripherals[0] }, "one Peripheral object")
            #expect(recorder.count("Device1.Connect") == 1, "one Device1.Connect")
            #expect(fixture.simulator.statistics.connections == 1)
            await central.close()
        }
    }

    @Test("one caller cancelling does not cancel the attempt others share; a cancelled waiter leaves at once")
    func cancellingOneOfSharedConnects() async throws {
        try await SimulatorFixture.run { fixture in
            let recorder = LogRecorder()
            let central = try await fixture.poweredCentral(options: tracing(recorder))
            let id = try await Self.discoverMonitor(central)
            // The link comes up 10 s after the Connect: the cancelled caller is due to leave at
            // once, long before, even on a loaded machine.
            fixture.simulator.inject(SimulatedFault(.connect, address: Self.hrm, action: .delay(.seconds(10))))
            // The caller that started the attempt leaves; the one that joined it stays. Its 40 s
            // deadline puts the stalled-attempt check at 20 s (half of it), well after the link
            // is up, and gives the Connect call 40 s: no second try, no timeout on a busy machine.
            let leaving = Task { () -> (BLEError?, connections: Int) in
                let error = await bleError { try await central.connect(id, timeout: .seconds(40)) }
                // Read as soon as it left: whether the shared attempt had come up meanwhile.
                return (error, fixture.simulator.statistics.connections)
            }
            try await recorder.waitFor("Device1.Connect")
            try await handledByBluetoothd(central)
            let staying = Watched { () -> Result<Peripheral, BLEError> in
                do throws(BLEError) { return .success(try await central.connect(id, timeout: .seconds(40))) } catch {
                    return .failure(error)
                }
            }
            try await eventually("both callers wait") { await central.peripherals[id]?.connectWaiterCount == 2 }
            leaving.cancel()
            let (error, connections) = await leaving.value
            #expect(error?.code == .cancelled)
            // It left without waiting for the attempt: that had not come up, and the other
            // caller still waits on it.
            #expect(connections == 0, "before the shared attempt, delayed 10 s, came up")
            #expect(staying.isRunning)
            #expect(await central.peripherals[id]?.connectWaiterCount == 1)
            let peripheral = try await staying.value.get()
            #expect(await peripheral.isConnected)
            #expect(recorder.count("Device1.Connect") == 1)
            #expect(recorder.count("Device1.Disconnect") == 0)
            await central.close()
        }
    }

    @Test("connecting to a connected peripheral returns at once")
    func connectWhenConnected() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected()
            let again = try await central.connect(peripheral.id, timeout: .seconds(10))
            #expect(again === peripheral)
            #expect(fixture.simulator.statistics.connections == 1)
            await central.close()
        }
    }

    @Test("a peripheral never seen is found by a targeted scan, then connected")
    func neverSeen() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            #expect(await central.knownPeripherals().isEmpty)
            let peripheral = try await central.connect(try PeripheralID(address: Self.hrm), timeout: .seconds(10))
            #expect(await peripheral.isConnected)
            #expect(await peripheral.name == "HRM")
            await central.close()
        }
    }

    @Test("a peripheral never seen and not advertising is not found before the deadline")
    func neverSeenSilent() async throws {
        var silent = SimulatorFixture.heartRateMonitor()
        silent.advertising = false
        try await SimulatorFixture.run(peripherals: [silent]) { fixture in
            let central = try await fixture.poweredCentral()
            // The peripheral advertises 5 s later (under the 30 s default deadline): a search
            // that outlived its own 300 ms deadline would end after that, if not connect.
            let advertise = LaterEvent(after: .seconds(5)) {
                try fixture.simulator.updatePeripheral(address: Self.hrm) { $0.advertising = true }
            }
            let error = await bleError {
                try await central.connect(try PeripheralID(address: Self.hrm), timeout: .milliseconds(300))
            }
            #expect(error?.code == .timeout || error?.code == .notFound)
            #expect(!advertise.hasBegun, "given up before the peripheral began advertising")
            try await advertise.happened()
            // Advertising now: a search finds it.
            let peripheral = try await central.connect(try PeripheralID(address: Self.hrm), timeout: .seconds(10))
            #expect(await peripheral.isConnected)
            await central.close()
        }
    }

    @Test("a known peripheral that stopped advertising is connected directly")
    func knownNotAdvertising() async throws {
        try await SimulatorFixture.run { fixture in
            let recorder = LogRecorder()
            let (central, peripheral) = try await fixture.connected(options: tracing(recorder))
            try await peripheral.disconnect()
            try fixture.simulator.updatePeripheral(address: Self.hrm) { $0.advertising = false }
            let discoveries = recorder.count("StartDiscovery")
            let again = try await central.connect(peripheral.id, timeout: .seconds(10))
            #expect(again === peripheral, "the same object across connections")
            #expect(await again.isConnected)
            #expect(recorder.count("StartDiscovery") == discoveries, "no scan needed")
            #expect(fixture.simulator.statistics.connections == 2)
            await central.close()
        }
    }

    @Test("a stored peripheral is connected after a bluetoothd restart without advertising")
    func storedAfterRestart() async throws {
        try await SimulatorFixture.run { fixture in
            let (central, peripheral) = try await fixture.connected()
            try await peripheral.disconnect()
            try fixture.simulator.updatePeripheral(address: Self.hrm) { $0.advertising = false }
            try await fixture.simulator.restartDaemon()
            try await central.waitUntilPoweredOn(timeout: .seconds(10))
            try await eventually("bluetoothd lists the stored device again") {
                await central.knownPeripherals().map(\.id) == [peripheral.id]
            }
            let again = try await central.connect(peripheral.id, timeout: .seconds(10))
            #expect(await again.isConnected)
            await central.close()
        }
    }

    @Test("connecting while powered off fails at once with poweredOff")
    func poweredOff() async throws {
        var options = SimulatorOptions()
        options.poweredOnStart = false
        try await SimulatorFixture.run(options: options) { fixture in
            let central = try await fixture.central()
            let error = await bleError { try await central.connect(try PeripheralID(address: Self.hrm)) }
            #expect(error?.code == .poweredOff)
            await central.close()
        }
    }

    @Test("an identifier of another adapter is refused")
    func otherAdapter() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            let error = await bleError {
                try await central.connect(try PeripheralID(adapter: "hci1", address: Self.hrm))
            }
            #expect(error?.code == .invalidArguments)
            await central.close()
        }
    }

    @Test("bluetoothd restarting during a Connect fails it with bluetoothUnavailable")
    func restartDuringConnect() async throws {
        try await SimulatorFixture.run { fixture in
            let recorder = LogRecorder()
            let central = try await fixture.poweredCentral(options: tracing(recorder))
            let id = try PeripheralID(address: Self.hrm)
            fixture.simulator.inject(SimulatedFault(.connect, address: Self.hrm, action: .noReply))
            let attempt = Task { try await central.connect(id, timeout: .seconds(20)) }
            try await recorder.waitFor("Device1.Connect")
            try await handledByBluetoothd(central)
            let restart = Task { try await fixture.simulator.restartDaemon(downtime: .milliseconds(300)) }
            let error = await bleError { try await attempt.value }
            #expect(error?.code == .bluetoothUnavailable)
            #expect(error?.isTransient == true)
            try await restart.value
            try await central.waitUntilPoweredOn(timeout: .seconds(10))
            let peripheral = try await central.connect(id, timeout: .seconds(10))
            #expect(await peripheral.isConnected)
            await central.close()
        }
    }
}
