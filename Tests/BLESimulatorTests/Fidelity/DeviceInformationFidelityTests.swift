import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// bluetoothd's deviceinfo plugin (`profiles/deviceinfo/deviceinfo.c`): the PnP ID of a
/// peer's Device Information service becomes `Device1.Modalias`, announced with
/// `ServicesResolved` after the gap plugin's changes (the real 5.66 daemon's trace).
@Suite("Fidelity: the deviceinfo plugin", .timeLimit(.minutes(1)))
struct DeviceInformationFidelityTests {
    private static let device1 = BlueZInterface.device1

    /// The sensor with a Device Information service holding `pnpID`, its GATT name "GATT".
    private static func sensor(pnpID: Data) -> VirtualPeripheral {
        var peripheral = Peripherals.sensor()
        peripheral.standardServices = StandardServices(deviceName: "GATT")
        let characteristic = VirtualCharacteristic(uuid: "2A50", flags: ["read"], value: HexData(pnpID))
        peripheral.services.append(VirtualService(uuid: "180A", characteristics: [characteristic]))
        return peripheral
    }

    /// Linux Foundation's USB vendor ID 0x1D6B, product 0x0246, version 0x0542: what bluetoothd
    /// 5.66 serves by default.
    private static let bluetoothdPnP = Data([0x02, 0x6b, 0x1d, 0x46, 0x02, 0x42, 0x05])

    @Test(
        "PnP ID sets Modalias once, after Name and Alias; an unchanged one is not announced again",
        arguments: Release.allCases)
    func pnpIDSetsModalias(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Self.sensor(pnpID: Self.bluetoothdPnP)]) { _, client, _ in
            let signal = try #require(try await client.connectSensorResolution())
            #expect(
                signal.hasSuffix(
                    "'ServicesResolved': <true>, 'Name': <'GATT'>, 'Alias': <'GATT'>, 'Modalias': <'usb:v1D6Bp0246d0542'>}, @as [])"
                ))
            try await client.call(Paths.sensor, Self.device1, "Disconnect")
            let again = client.transcript.mark
            try await client.connectAndResolve()
            #expect(client.resolutions(since: again).map { Array($0.changedProperties.keys) } == [["ServicesResolved"]])
            #expect(try await client.get(Paths.sensor, Self.device1, "Modalias") == .string("usb:v1D6Bp0246d0542"))
        }
    }

    @Test("A vendor ID source other than Bluetooth SIG or USB, or a short value, gives no Modalias")
    func otherSourcesGiveNothing() async throws {
        for value in [Data([0x03, 0x6b, 0x1d, 0x46, 0x02, 0x42, 0x05]), Data([0x01, 0x6b, 0x1d])] {
            try await Fidelity.run(.bluez566, peripherals: [Self.sensor(pnpID: value)]) { _, client, _ in
                try await client.connectSensor()
                let properties = try await client.getAll(Paths.sensor, Self.device1)
                #expect(properties["Modalias"] == nil, "\(value as NSData)")
            }
        }
        try await Fidelity.run(
            .bluez566, peripherals: [Self.sensor(pnpID: Data([0x01, 0x5f, 0x00, 0x01, 0x00, 0x10, 0x00]))]
        ) {
            _, client, _ in
            try await client.connectSensor()
            #expect(
                try await client.get(Paths.sensor, Self.device1, "Modalias") == .string("bluetooth:v005Fp0001d0010"))
        }
    }
}
