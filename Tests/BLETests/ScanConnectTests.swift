import BLE
import BLESimulator
import Foundation
import Testing

@Suite("Scanning and connecting")
struct ScanConnectTests {
    @Test("scan by service finds the heart-rate monitor with its advertisement")
    func scanByService() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.central()
            try await central.waitUntilPoweredOn(timeout: .seconds(5))
            let found = try await first(central.scan(services: [BluetoothUUID("180D")])) { _ in true }
            let discovery = try #require(found)
            #expect(discovery.id.address == SimulatorFixture.heartRateAddress)
            #expect(discovery.name == "HRM")
            #expect(discovery.advertisement.serviceUUIDs.contains(BluetoothUUID("180D")))
            await central.close()
        }
    }

    @Test("connect, then disconnect with an event")
    func connectDisconnect() async throws {
        try await SimulatorFixture.run { fixture in
            let central = try await fixture.central()
            try await central.waitUntilPoweredOn(timeout: .seconds(5))
            let discovery = try #require(try await first(central.scan(services: [BluetoothUUID("180D")])) { _ in true })
            let peripheral = try await central.connect(discovery.id, timeout: .seconds(5))
            #expect(await peripheral.isConnected)
            let events = peripheral.events
            try await peripheral.disconnect()
            #expect(
                try await first(events) { if case .disconnected = $0 { true } else { false } } == .disconnected(.local))
            #expect(await !peripheral.isConnected)
            await central.close()
        }
    }
}
