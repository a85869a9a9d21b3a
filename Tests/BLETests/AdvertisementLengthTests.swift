import BlueZ
import Foundation
import Testing

@testable import BLE

/// The advertising data length check (issue 22): what cannot fit the adapter's advertisement
/// is refused before bluetoothd is asked, with the parts named.
@Suite("Advertisement length")
struct AdvertisementLengthTests {
    static let legacy = LEAdvertisingManagerProperties(supportedInstances: 5)
    static let extended = LEAdvertisingManagerProperties(
        supportedInstances: 5,
        supportedCapabilities: AdvertisingCapabilities(
            maxAdvertisingDataLength: 251, maxScanResponseLength: 251, minTxPower: -34, maxTxPower: 10))

    @Test("each part is a length byte, a type byte and its data; one list per UUID size")
    func parts() {
        let data = Advertisement(
            serviceUUIDs: ["180D", "180F", "12345678", "b0b00001-5b1e-4d2a-9f00-62656e636800"],
            solicitUUIDs: ["1812"], manufacturerData: [0x004C: Data([1, 2, 3])], serviceData: ["180D": Data([9])])
        let parts = Dictionary(uniqueKeysWithValues: AdvertisementLength.parts(data).map { ($0.name, $0.bytes) })
        #expect(parts["service UUIDs"] == (2 + 4) + (2 + 4) + (2 + 16))
        #expect(parts["solicited UUIDs"] == 2 + 2)
        #expect(parts["manufacturer data"] == 2 + 2 + 3)
        #expect(parts["service data"] == 2 + 2 + 1)
    }

    @Test("31 bytes fit a legacy advertisement, 32 do not; extended advertising takes the adapter's limit")
    func limits() throws {
        // 4 + 27 = 31 bytes.
        let fits = Advertisement(manufacturerData: [0x004C: Data(repeating: 0, count: 27)])
        try AdvertisementLength.check(fits, manager: Self.legacy)
        let over = Advertisement(manufacturerData: [0x004C: Data(repeating: 0, count: 28)])
        let error = #expect(throws: BLEError.self) { try AdvertisementLength.check(over, manager: Self.legacy) }
        #expect(error?.code == .invalidArguments)
        #expect(error?.message.contains("32 bytes (manufacturer data 32)") == true, "\(String(describing: error))")
        var extended = over
        extended.secondaryChannel = .oneM
        try AdvertisementLength.check(extended, manager: Self.extended)
        #expect(throws: BLEError.self) { try AdvertisementLength.check(extended, manager: Self.legacy) }
        let name = Advertisement(localName: String(repeating: "n", count: 40))
        try AdvertisementLength.check(name, manager: Self.legacy)
    }
}

/// The same check on a private bus with the simulator: nothing is registered.
@Suite("Advertisement length on the bus", .timeLimit(.minutes(1)))
struct AdvertisementLengthBusTests {
    @Test("an advertisement too long for legacy advertising is refused before RegisterAdvertisement")
    func refusedBeforeRegistering() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let data = Advertisement(
                serviceUUIDs: ["b0b00001-5b1e-4d2a-9f00-62656e636800"],
                manufacturerData: [0x004C: Data(repeating: 7, count: 12)])
            let error = await #expect(throws: BLEError.self) { try await manager.startAdvertising(data) }
            #expect(error?.code == .invalidArguments)
            #expect(fixture.simulator.advertisements.isEmpty)
            #expect(await !manager.isAdvertising)
            try await manager.startAdvertising(Advertisement(localName: "fits"))
            #expect(fixture.simulator.advertisements.count == 1)
        }
    }
}
