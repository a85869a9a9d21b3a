import BLE
import Foundation
import Testing

/// On a private bus with the simulator: the IDs the SDK hands out name the adapter by its
/// address and carry the address type, and an ID stored while the adapter had another `hciN`
/// name still connects, while one of another adapter is refused.
@Suite("Adapter identity of peripheral IDs", .timeLimit(.minutes(1)))
struct AdapterIdentityTests {
    static let hrm = SimulatorFixture.heartRateAddress
    /// The simulator's first adapter (`SimulatorOptions.adapters`).
    static let adapterAddress = "00:1A:7D:DA:71:13"

    @Test("scan results, known peripherals and connected ones carry the adapter's address and the address type")
    func handedOutIDs() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            let seen = try #require(try await first(central.scan()) { $0.id.address == Self.hrm })
            #expect(seen.id.adapterAddress == Self.adapterAddress)
            #expect(seen.id.addressType == .public)
            #expect(await central.knownPeripherals().map(\.id.adapterAddress) == [Self.adapterAddress])
            let peripheral = try await central.connect(try PeripheralID(address: Self.hrm), timeout: .seconds(10))
            #expect(peripheral.id.adapterAddress == Self.adapterAddress, "filled in from what bluetoothd reports")
            #expect(peripheral.id.addressType == .public)
            try await peripheral.disconnect()
            await central.close()
        }
    }

    @Test("an ID naming the adapter hci3 by this adapter's address connects here; another adapter's is refused")
    func renamedAdapter() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.poweredCentral()
            let stored = try PeripheralID(adapter: "hci3", address: Self.hrm, adapterAddress: Self.adapterAddress)
            let peripheral = try await central.connect(stored, timeout: .seconds(10))
            #expect(peripheral.id.adapter == "hci0", "named as the adapter is now")
            #expect(peripheral.id == stored)
            try await peripheral.disconnect()

            let foreign = try PeripheralID(adapter: "hci0", address: Self.hrm, adapterAddress: "00:1A:7D:DA:71:99")
            let refusal = await #expect(throws: BLEError.self) {
                try await central.connect(foreign, timeout: .seconds(5))
            }
            #expect(refusal?.code == .invalidArguments)
            await central.close()
        }
    }
}
