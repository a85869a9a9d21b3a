import BLE
import BLESimulator
import Foundation
import Testing

/// Server-side `AcquireWrite` (issue 22), on a private bus with the simulator as the remote
/// central's bluetoothd: writes without response arrive through a socket, each a request that
/// names the central; characteristics with write requests keep `WriteValue`.
@Suite("Peripheral manager: AcquireWrite", .timeLimit(.minutes(1)))
struct PeripheralManagerAcquireWriteTests {
    static let stream = MutableService(
        uuid: "b0b00010-5b1e-4d2a-9f00-62656e636800",
        characteristics: [
            MutableCharacteristic(
                uuid: "b0b00011-5b1e-4d2a-9f00-62656e636800", properties: [.writeWithoutResponse],
                permissions: [.writeable]),
            MutableCharacteristic(
                uuid: "b0b00012-5b1e-4d2a-9f00-62656e636800", properties: [.write, .writeWithoutResponse],
                permissions: [.writeable]),
        ])

    @Test("writes without response come through the socket, in order, naming the central")
    func writesThroughTheSocket() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            try await manager.add(Self.stream)
            let requests = Task {
                var received: [PeripheralRequest] = []
                for await request in manager.requests {
                    received.append(request)
                    if received.count == 3 { break }
                }
                return received
            }
            for byte: UInt8 in 1...3 {
                try await fixture.simulator.remoteWrite(
                    Data([byte, 0xAA]), to: "b0b00011-5b1e-4d2a-9f00-62656e636800", central: "11:22:33:44:55:66",
                    type: .command)
            }
            let received = await requests.value
            #expect(received.map(\.value) == [Data([1, 0xAA]), Data([2, 0xAA]), Data([3, 0xAA])])
            #expect(received.allSatisfy { $0.writeType == .command && !$0.expectsResponse })
            #expect(received.allSatisfy { $0.central?.address == "11:22:33:44:55:66" })
            let written = fixture.simulator.registeredApplications.first?.services.first?.characteristics
            #expect(written?.first?.supportsAcquireWrite == true)
            #expect(
                written?.last?.supportsAcquireWrite == false, "a characteristic with write requests keeps WriteValue")
        }
    }
}
