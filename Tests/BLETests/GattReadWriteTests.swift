import BLE
import BLESimulator
import Foundation
import Testing

/// Reads (with offset), writes with and without response (long values, the MTU rule) and
/// descriptors.
@Suite("GATT read and write", .timeLimit(.minutes(1)))
struct GattReadWriteTests {
    static let sensor = TestPeripherals.sensorAddress

    static func run(
        mtu: UInt16 = 185, _ body: @escaping (SimulatorFixture, Central, Peripheral) async throws -> Void
    ) async throws {
        try await SimulatorFixture.run(peripherals: [TestPeripherals.sensor(mtu: mtu)]) { fixture in
            let (central, peripheral) = try await fixture.connected(Self.sensor)
            try await body(fixture, central, peripheral)
            await central.close()
        }
    }

    static let longText = Data("swift-ble simulator, long value".utf8)

    @Test("read, and read from an offset")
    func readWithOffset() async throws {
        try await Self.run { _, _, peripheral in
            let name = try await peripheral.characteristic(BluetoothUUID("2A29"), in: BluetoothUUID("180A"))
            #expect(try await name.read() == Self.longText)
            #expect(try await name.read(offset: 6) == Self.longText.dropFirst(6))
            #expect(try await name.read(offset: UInt16(Self.longText.count)) == Data())
            let beyond = await bleError { try await name.read(offset: 200) }
            #expect(beyond?.code == .invalidArguments)
            #expect(beyond?.message == "Invalid offset")
        }
    }

    @Test("a write with response longer than the MTU is one long write")
    func longWrite() async throws {
        try await Self.run(mtu: 23) { fixture, _, peripheral in
            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            let value = Data((0..<300).map { UInt8(truncatingIfNeeded: $0) })
            try await control.write(value, type: .withResponse)
            #expect(try fixture.simulator.value(address: Self.sensor, characteristic: "2A39") == value)
            #expect(try await control.read() == value)
            #expect(await peripheral.maximumWriteLength(for: .withResponse) == 512)
            let tooLong = await bleError { try await control.write(Data(count: 513), type: .withResponse) }
            #expect(tooLong?.code == .invalidArguments)
        }
    }

    @Test("the write-without-response limit is the MTU minus 3")
    func maximumWriteLength() async throws {
        try await Self.run(mtu: 185) { _, _, peripheral in
            #expect(await peripheral.maximumWriteLength(for: .withoutResponse) == 182)
            #expect(await peripheral.maximumWriteLength(for: .withResponse) == 512)
        }
        try await Self.run(mtu: 247) { _, _, peripheral in
            #expect(await peripheral.maximumWriteLength(for: .withoutResponse) == 244)
        }
    }

    @Test("without an MTU from BlueZ the limit falls back to 20")
    func maximumWriteLengthFallback() async throws {
        // Not even the standard services: no characteristic, so no MTU.
        var bare = VirtualPeripheral(address: "D1:00:00:00:00:0E", name: "Bare")
        bare.standardServices = nil
        try await SimulatorFixture.run(peripherals: [bare]) { fixture in
            let (central, peripheral) = try await fixture.connected("D1:00:00:00:00:0E")
            #expect(try await peripheral.discoverServices().isEmpty)
            #expect(await peripheral.maximumWriteLength(for: .withoutResponse) == 20)
            await central.close()
        }
    }

    @Test("a write without response up to the limit goes out; beyond it is refused, not truncated")
    func writeWithoutResponse() async throws {
        try await Self.run(mtu: 185) { fixture, _, peripheral in
            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            let fits = Data(repeating: 0xA5, count: 182)
            try await control.write(fits, type: .withoutResponse)
            #expect(try fixture.simulator.value(address: Self.sensor, characteristic: "2A39") == fits)
            let error = await bleError { try await control.write(Data(count: 183), type: .withoutResponse) }
            #expect(error?.code == .invalidArguments)
            #expect(try fixture.simulator.value(address: Self.sensor, characteristic: "2A39") == fits, "nothing sent")
        }
    }

    @Test("descriptors are read and written")
    func descriptors() async throws {
        try await Self.run { _, _, peripheral in
            let rate = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
            let userDescription = try #require(rate.descriptors.first { $0.uuid == BluetoothUUID("2901") })
            #expect(try await rate.read(userDescription) == Data("Heart rate".utf8))

            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            let custom = try #require(
                control.descriptors.first { $0.uuid == BluetoothUUID("12345678-1234-5678-1234-56789abcdef0") })
            #expect(try await control.read(custom) == Data([0x00]))
            try await control.write(Data([0x42, 0x43]), to: custom)
            #expect(try await control.read(custom) == Data([0x42, 0x43]))
        }
    }

    @Test("the CCC descriptor is BlueZ's: readable, and writing it is refused")
    func cccDescriptor() async throws {
        try await Self.run { _, _, peripheral in
            let rate = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
            let ccc = try #require(rate.descriptors.first { $0.uuid == BluetoothUUID("2902") })
            #expect(try await rate.read(ccc) == Data([0x00, 0x00]))
            let values = try await rate.subscribe()
            #expect(try await rate.read(ccc) == Data([0x01, 0x00]), "notifications enabled")
            let write = await bleError { try await rate.write(Data([0x00, 0x00]), to: ccc) }
            #expect(write?.code == .notPermitted)
            _ = values
        }
    }

    @Test("reads and writes need a connection")
    func notConnected() async throws {
        try await Self.run { _, _, peripheral in
            let control = try await peripheral.characteristic(BluetoothUUID("2A39"), in: BluetoothUUID("180D"))
            try await peripheral.disconnect()
            #expect(await bleError { try await control.read() }?.code == .notConnected)
            #expect(await bleError { try await control.write(Data([1])) }?.code == .notConnected)
        }
    }
}
