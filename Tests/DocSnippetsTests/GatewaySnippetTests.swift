import BLE
import Foundation
import Synchronization
import Testing

@testable import DocSnippets

/// The "Keeping a gateway running" article's code: a second start takes the first one's
/// subscription over, and its values reach the app.
@Suite("Gateway snippet")
struct GatewaySnippetTests {
    @Test("the restored subscription streams again after a restart")
    func restoredSubscriptionStreams() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "swift-ble-gateway-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await SnippetFixture.run { fixture in
            let first = try await KeepingAGatewayRunning.start(bus: fixture.blePath, directory: directory) { _ in }
            #expect(await first.restoredState == nil, "the first start has nothing to take over")
            try await first.waitUntilPoweredOn(timeout: .seconds(5))
            let peripheral = try await first.connect(try fixture.id, timeout: .seconds(5))
            let rate = try await peripheral.characteristic(BluetoothUUID("2A37"), in: BluetoothUUID("180D"))
            let values = try await rate.subscribe()
            await first.close()
            withExtendedLifetime(values) {}

            let received = Mutex<[Data]>([])
            let (arrived, arrival) = AsyncStream<Void>.makeStream()
            let second = try await KeepingAGatewayRunning.start(bus: fixture.blePath, directory: directory) { value in
                received.withLock { $0.append(value) }
                arrival.yield()
            }
            #expect(await second.restoredState?.subscriptions.count == 1)
            let pusher = fixture.heartbeats(every: .milliseconds(20))
            defer { pusher.cancel() }
            var waiting = arrived.makeAsyncIterator()
            _ = await waiting.next()
            #expect(received.withLock { $0.first?.first } == 0, "a heart-rate measurement: flags byte 0")
            try await second.restoredState?.peripherals.first?.disconnect()
            await second.close()
        }
    }
}
