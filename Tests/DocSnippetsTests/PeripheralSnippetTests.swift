import BLE
import BLESimulator
import Foundation
import Testing

@testable import DocSnippets

/// The code of the "Acting as a peripheral" article runs against the simulator, whose remote
/// central plays the other side.
@Suite("Article snippets: acting as a peripheral")
struct PeripheralSnippetTests {
    @Test("Publish and advertise; answer a read and two writes; stream notifications with back-pressure")
    func actingAsAPeripheral() async throws {
        try await SnippetFixture.run { fixture in
            let simulator = fixture.simulator
            let manager = try await ActingAsAPeripheral.publish(bus: fixture.blePath)
            #expect(simulator.advertisements.first?.localName == "HRM")
            #expect(simulator.registeredApplications.first?.services.first?.characteristics.count == 3)
            #expect(try await simulator.remoteRead(characteristic: "2A38") == Data([0x02]))

            let answering = Task { await ActingAsAPeripheral.answer(manager, count: 2) }
            try await simulator.remoteWrite(Data([0x01]), to: "2A39")
            let refused = await #expect(throws: RemoteCentralError.self) {
                try await simulator.remoteWrite(Data([0x02]), to: "2A39")
            }
            #expect(refused?.attError == 0x80)
            #expect(await answering.value.count == 2)

            let notifications = simulator.notifications(for: "2A37")
            // AcquireNotify is answered before the central's CCC write returns.
            try await simulator.remoteSubscribe(to: "2A37")
            #expect(await manager.isNotifying("2A37"))
            try await ActingAsAPeripheral.stream(manager, count: 50)
            var received = 0
            for await _ in notifications {
                received += 1
                if received == 50 { break }
            }
            #expect(received == 50)
            await manager.close()
        }
    }
}
