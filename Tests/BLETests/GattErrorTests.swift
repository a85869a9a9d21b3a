import BLE
import BLESimulator
import BlueZ
import Foundation
import Testing

/// GATT failures: ATT errors, deadlines, cancellation, and ordering (no InProgress leaks).
@Suite("GATT errors and ordering", .timeLimit(.minutes(1)))
struct GattErrorTests {
    static let sensor = TestPeripherals.sensorAddress

    static func run(
        options: CentralOptions = CentralOptions(),
        _ body: @escaping (SimulatorFixture, Central, Peripheral) async throws -> Void
    ) async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor()]) { fixture in
            let (central, peripheral) = try await fixture.connected(Self.sensor, options: options)
            try await body(fixture, central, peripheral)
            await central.close()
        }
    }

    static func control(_ peripheral: Peripheral) async throws -> Characteristic {
        try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
    }

    struct ATTCase: Sendable, CustomTestStringConvertible {
        var operation: SimulatedFault.Operation
        var att: UInt8
        var code: BLEError.Code
        var attErrorCode: UInt8?
        var testDescription: String { "\(operation.rawValue) ATT 0x\(String(att, radix: 16)) → \(code)" }
    }

    static let attCases: [ATTCase] = [
        ATTCase(operation: .read, att: 0x02, code: .notPermitted),
        ATTCase(operation: .write, att: 0x03, code: .notPermitted),
        ATTCase(operation: .read, att: 0x05, code: .notPermitted),
        ATTCase(operation: .write, att: 0x0F, code: .notPermitted),
        ATTCase(operation: .read, att: 0x07, code: .invalidArguments),
        ATTCase(operation: .write, att: 0x0D, code: .invalidArguments),
        ATTCase(operation: .write, att: 0x08, code: .notAuthorized),
        ATTCase(operation: .read, att: 0x06, code: .notSupported),
        ATTCase(operation: .read, att: 0x80, code: .attError, attErrorCode: 0x80),
        ATTCase(operation: .write, att: 0x9F, code: .attError, attErrorCode: 0x9F),
        ATTCase(operation: .write, att: 0x11, code: .attError, attErrorCode: 0x11),
    ]

    @Test("ATT errors from the peripheral map to codes", arguments: attCases)
    func attErrors(_ entry: ATTCase) async throws {
        try await Self.run { fixture, _, peripheral in
            let control = try await Self.control(peripheral)
            fixture.simulator.inject(
                SimulatedFault(entry.operation, address: Self.sensor, action: .attError(entry.att)))
            let error = await bleError {
                if entry.operation == .read {
                    _ = try await control.read()
                } else {
                    try await control.write(Data([0x01]), type: .withResponse)
                }
            }
            #expect(error?.code == entry.code)
            #expect(error?.attErrorCode == entry.attErrorCode)
            #expect(error?.isTransient == false)
            // The link is fine: the next operation works.
            #expect(try await control.read().count == 1)
            #expect(await peripheral.isConnected)
        }
    }

    @Test("a characteristic that refuses reads")
    func readError() async throws {
        var peripheral = TestPeripherals.sensor()
        peripheral.services[0].characteristics[1].readError = 0x02
        try await SimulatorFixture.run(peripherals: [peripheral]) { fixture in
            let (central, connected) = try await fixture.connected(Self.sensor)
            let location = try await connected.characteristic(BluetoothUUID("2A38"), in: BluetoothUUID("180D"))
            let error = await bleError { try await location.read() }
            #expect(error?.code == .notPermitted)
            #expect(error?.dbusErrorName == BlueZErrorName.notPermitted)
            #expect(error?.message == BlueZErrorMessage.readNotPermitted)
            await central.close()
        }
    }

    @Test("a read slower than its deadline times out, and the next one works")
    func readTimeout() async throws {
        try await Self.run { fixture, _, peripheral in
            let control = try await Self.control(peripheral)
            // Answered 8 s later: far past the 150 ms deadline, even on a loaded machine.
            fixture.simulator.inject(SimulatedFault(.read, address: Self.sensor, action: .delay(.seconds(8))))
            let served = fixture.simulator.statistics.gattOperations
            let error = await bleError { try await control.read(timeout: .milliseconds(150)) }
            #expect(error?.code == .timeout)
            #expect(error?.isTransient == true)
            // Ended by its deadline, not by the answer: the simulator has not answered it yet.
            #expect(fixture.simulator.statistics.gattOperations == served, "before the delayed answer")
            // bluetoothd still waits for the first answer (one ATT request at a time): the next
            // read queues behind it there, and succeeds.
            #expect(try await control.read() == Data([0x00]))
        }
    }

    @Test("a write slower than its deadline times out; the next write waits its turn, no InProgress")
    func writeTimeout() async throws {
        try await Self.run { fixture, _, peripheral in
            let control = try await Self.control(peripheral)
            fixture.simulator.inject(SimulatedFault(.write, address: Self.sensor, action: .delay(.milliseconds(500))))
            let error = await bleError { try await control.write(Data([0x01]), timeout: .milliseconds(100)) }
            #expect(error?.code == .timeout)
            // bluetoothd still has the first write in flight and answers InProgress: the SDK waits.
            try await control.write(Data([0x02]), timeout: .seconds(10))
            #expect(try fixture.simulator.value(address: Self.sensor, characteristic: "2A39") == Data([0x02]))
        }
    }

    @Test("the default deadline is the central's callTimeout")
    func defaultDeadline() async throws {
        var options = CentralOptions()
        options.callTimeout = .milliseconds(200)
        try await Self.run(options: options) { fixture, _, peripheral in
            let control = try await Self.control(peripheral)
            // Answered 8 s later, under the 25 s default: a read that waited for that default
            // would get the value instead of timing out.
            fixture.simulator.inject(SimulatedFault(.read, address: Self.sensor, action: .delay(.seconds(8))))
            let served = fixture.simulator.statistics.gattOperations
            #expect(await bleError { try await control.read() }?.code == .timeout)
            #expect(fixture.simulator.statistics.gattOperations == served, "timed out before the delayed answer")
        }
    }

    @Test("cancelling a read ends it at once; the peripheral stays usable")
    func cancelRead() async throws {
        let recorder = LogRecorder()
        try await Self.run(options: tracing(recorder)) { fixture, central, peripheral in
            let control = try await Self.control(peripheral)
            // Long enough that a loaded machine cannot finish the read before the cancel; the
            // next read shares the simulator's pending one (one read per attribute), so not longer.
            fixture.simulator.inject(SimulatedFault(.read, address: Self.sensor, action: .delay(.seconds(8))))
            let read = Task { try await control.read(timeout: .seconds(30)) }
            try await recorder.waitFor("GattCharacteristic1.ReadValue")
            try await handledByBluetoothd(central)
            let served = fixture.simulator.statistics.gattOperations
            read.cancel()
            #expect(await bleError { try await read.value }?.code == .cancelled)
            // It did not wait for the answer: the simulator still holds the read.
            #expect(fixture.simulator.statistics.gattOperations == served, "before the delayed answer")
            #expect(try await control.read() == Data([0x00]))
        }
    }

    @Test("a task cancelled before the read starts fails without calling bluetoothd")
    func cancelledBeforeStart() async throws {
        let recorder = LogRecorder()
        try await Self.run(options: tracing(recorder)) { _, _, peripheral in
            let control = try await Self.control(peripheral)
            let reads = recorder.count("ReadValue")
            let read = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await control.read()
            }
            #expect(await bleError { try await read.value }?.code == .cancelled)
            #expect(recorder.count("ReadValue") == reads)
        }
    }

    @Test("concurrent reads and writes on one peripheral are ordered: no InProgress reaches bluetoothd's caller")
    func ordered() async throws {
        let recorder = LogRecorder()
        try await Self.run(options: tracing(recorder)) { fixture, _, peripheral in
            let control = try await Self.control(peripheral)
            let level = try await peripheral.characteristic(BluetoothUUID("2A19"), in: BluetoothUUID("180F"))
            // Every write takes a moment, so overlapping requests would meet bluetoothd's InProgress.
            fixture.simulator.inject(
                SimulatedFault(.write, address: Self.sensor, action: .delay(.milliseconds(3)), count: nil))
            let results = try await withThrowingTaskGroup(of: (Int, Data?).self) { group in
                for index in 0..<40 {
                    group.addTask {
                        switch index % 3 {
                        case 0:
                            try await control.write(Data([UInt8(index)]), type: .withResponse)
                            return (index, nil)
                        case 1: return (index, try await control.read())
                        default: return (index, try await level.read())
                        }
                    }
                }
                return try await group.reduce(into: [(Int, Data?)]()) { $0.append($1) }
            }
            fixture.simulator.clearFaults()
            #expect(results.count == 40)
            #expect(results.filter { $0.0 % 3 == 2 }.allSatisfy { $0.1 == Data([0x64]) })
            #expect(recorder.count("InProgress") == 0, "requests never overlapped")
            let written = Set(results.filter { $0.0 % 3 == 0 }.map { Data([UInt8($0.0)]) })
            let last = try #require(try fixture.simulator.value(address: Self.sensor, characteristic: "2A39"))
            #expect(written.contains(last))
        }
    }
}
