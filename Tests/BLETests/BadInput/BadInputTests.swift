import BLE
import BlueZ
import DBus
import Foundation
import Testing

/// What a broken or hostile "bluetoothd" sends never crashes the SDK: each case is a typed
/// error or a documented ignore. The daemon here is ``FakeBluetoothd``, a plain D-Bus peer
/// owning `org.bluez` (the simulator never misbehaves this way).
@Suite("Bad input from bluetoothd", .timeLimit(.minutes(1)))
struct BadInputTests {
    static let characteristicUUID = BluetoothUUID("2A38")
    static let serviceUUID = BluetoothUUID("180D")

    @Test("an adapter whose properties have the wrong types counts as missing: unsupported, a typed error")
    func wrongAdapterPropertyType() async throws {
        var adapter = FakeBluetoothd.adapterProperties()
        adapter["Powered"] = .string("yes")
        try await FakeBluetoothd.run { fake in
            try fake.export(FakeBluetoothd.adapter, BlueZInterface.adapter1, adapter)
            try await fake.takeName()
            let central = try await fake.central()
            #expect(await central.state == .unsupported)
            let error = await bleError { try await central.waitUntilPoweredOn(timeout: .seconds(5)) }
            #expect(error?.code == .unsupported)
            await central.close()
        }
    }

    @Test("a property change of the wrong type on a connected device is ignored: the link stays up")
    func wrongTypeInPropertyChange() async throws {
        try await FakeBluetoothd.run { fake in
            try fake.exportConnectedPeripheral(methods: [
                .immediate(BlueZMethod.readValue, in: try Signature("a{sv}"), out: try Signature("ay")) { _ in
                    [.bytes(Data([0x2A]))]
                }
            ])
            try await fake.takeName()
            let central = try await fake.central()
            let peripheral = try await central.connect(
                try PeripheralID(address: FakeBluetoothd.address), timeout: .seconds(5))
            try fake.propertiesChanged(FakeBluetoothd.device, BlueZInterface.device1, ["RSSI": .string("loud")])
            try fake.propertiesChanged(FakeBluetoothd.device, BlueZInterface.device1, ["Connected": .uint32(0)])
            // A call after the signals is handled after them (one sender, one order).
            let characteristic = try await peripheral.characteristic(Self.characteristicUUID, in: Self.serviceUUID)
            #expect(try await characteristic.read(timeout: .seconds(5)) == Data([0x2A]))
            #expect(await peripheral.isConnected)
            await central.close()
        }
    }

    @Test("a huge value (1 MiB read reply) arrives whole")
    func hugeValue() async throws {
        let huge = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0) })
        try await FakeBluetoothd.run { fake in
            try fake.exportConnectedPeripheral(methods: [
                .immediate(BlueZMethod.readValue, in: try Signature("a{sv}"), out: try Signature("ay")) { _ in
                    [.bytes(huge)]
                }
            ])
            try await fake.takeName()
            let central = try await fake.central()
            let peripheral = try await central.connect(
                try PeripheralID(address: FakeBluetoothd.address), timeout: .seconds(5))
            let characteristic = try await peripheral.characteristic(Self.characteristicUUID, in: Self.serviceUUID)
            #expect(try await characteristic.read(timeout: .seconds(10)) == huge)
            await central.close()
        }
    }

    @Test("unknown characteristic flags are ignored; the known ones still count")
    func unknownFlags() async throws {
        let flags = ["read", "x-future-flag", "write", ""]
        try await FakeBluetoothd.run { fake in
            try fake.exportConnectedPeripheral(characteristic: FakeBluetoothd.characteristicProperties(flags: flags))
            try await fake.takeName()
            let central = try await fake.central()
            let peripheral = try await central.connect(
                try PeripheralID(address: FakeBluetoothd.address), timeout: .seconds(5))
            let characteristic = try await peripheral.characteristic(Self.characteristicUUID, in: Self.serviceUUID)
            #expect(characteristic.properties.contains(.read))
            #expect(characteristic.properties.contains(.write))
            #expect(!characteristic.properties.contains(.notify))
            await central.close()
        }
    }

    @Test("a characteristic that vanishes during a read: the read fails with a typed error, the handle goes stale")
    func objectVanishesMidCall() async throws {
        try await FakeBluetoothd.run { fake in
            try fake.exportConnectedPeripheral(methods: [
                ExportedMethod(BlueZMethod.readValue, in: try Signature("a{sv}"), out: try Signature("ay")) { _ in
                    try fake.remove(FakeBluetoothd.characteristic)
                    try fake.remove(FakeBluetoothd.service)
                    throw DBusError.reply("org.freedesktop.DBus.Error.UnknownObject", "gone")
                }
            ])
            try await fake.takeName()
            let central = try await fake.central()
            let peripheral = try await central.connect(
                try PeripheralID(address: FakeBluetoothd.address), timeout: .seconds(5))
            let characteristic = try await peripheral.characteristic(Self.characteristicUUID, in: Self.serviceUUID)
            // Ended by the fake's answer, not by the deadline: a read ended by that fails with
            // timeout.
            let error = await bleError { try await characteristic.read(timeout: .seconds(20)) }
            #expect(error != nil && error?.code != .timeout)
            try await handledBy(fake, central)
            #expect(await (try? peripheral.discoverServices())?.isEmpty == true)
            #expect(await bleError { try await characteristic.read() }?.code == .servicesChanged)
            await central.close()
        }
    }

    @Test("a device that vanishes during Connect: connect fails with a typed error before its deadline")
    func deviceVanishesMidConnect() async throws {
        try await FakeBluetoothd.run { fake in
            try fake.export(FakeBluetoothd.adapter, BlueZInterface.adapter1, FakeBluetoothd.adapterProperties())
            try fake.export(
                FakeBluetoothd.device, BlueZInterface.device1, FakeBluetoothd.deviceProperties(),
                methods: [
                    ExportedMethod(BlueZMethod.connect) { _ in
                        try fake.remove(FakeBluetoothd.device)
                        throw DBusError.reply("org.bluez.Error.DoesNotExist", "Does Not Exist")
                    },
                    .immediate(BlueZMethod.disconnect) { _ in [] },
                ])
            try await fake.takeName()
            let central = try await fake.central()
            // Ended by the vanished device, before its deadline: a connect ended by that fails
            // with timeout.
            let error = await bleError {
                try await central.connect(try PeripheralID(address: FakeBluetoothd.address), timeout: .seconds(20))
            }
            #expect(error != nil && error?.code != .timeout)
            await central.close()
        }
    }
}

/// Returns once the central's connection has received everything the fake sent before (a
/// round trip from the fake to the central's side of the bus).
func handledBy(_ fake: FakeBluetoothd, _ central: Central) async throws {
    try await central.setPowered(true)
}
