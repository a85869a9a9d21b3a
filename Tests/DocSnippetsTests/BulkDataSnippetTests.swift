import BLE
import BLESimulator
import Foundation
import Testing

@testable import DocSnippets

/// The code of the "Moving bulk data: L2CAP channels" article, against the simulator's channels.
@Suite("Article snippets: moving bulk data")
struct BulkDataSnippetTests {
    @Test("an image goes out in SDUs of the channel's MTU and arrives whole at the peripheral")
    func upload() async throws {
        var monitor = SnippetFixture.heartRateMonitor()
        monitor.l2capServers = [VirtualL2CAPServer(psm: 0x0080, behavior: .sink, mtu: 1000)]
        try await SnippetFixture.run(monitor: monitor) { fixture in
            let central = try await MovingBulkData.simulatedCentral(bus: fixture.blePath, simulator: fixture.simulator)
            let peripheral = try await central.connect(try fixture.id, timeout: .seconds(10))
            let image = Data((0..<25_500).map { UInt8(truncatingIfNeeded: $0) })
            #expect(try await MovingBulkData.upload(image, to: peripheral, psm: 0x0080) == 26)
            await fixture.simulator.l2capChannelsClosed()  // the snippet closed it: all read
            #expect(fixture.simulator.statistics.l2capSDUsReceived == 26)
            #expect(fixture.simulator.statistics.l2capBytesReceived == image.count)
            await central.close()
        }
    }

    @Test("a published PSM echoes what the simulated central sends until it closes")
    func publish() async throws {
        try await SnippetFixture.run { fixture in
            var options = PeripheralManagerOptions()
            options.l2capTransport = fixture.simulator.l2capTransport
            let manager = try await PeripheralManager(bus: fixture.blePath, options: options)
            try await manager.waitUntilPoweredOn(timeout: .seconds(10))
            let (psm, echoed) = try await MovingBulkData.serveEcho(manager)
            let central = try fixture.simulator.remoteOpenL2CAPChannel(psm: psm)
            var answers = central.incoming.makeAsyncIterator()
            for index in 0..<3 {
                #expect(central.send(Data([UInt8(index)])))
                #expect(await answers.next() == Data([UInt8(index)]))
            }
            central.close()
            #expect(await echoed.value == 3)
            await manager.close()
        }
    }
}
