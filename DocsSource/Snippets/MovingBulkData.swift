import BLE
import BLESimulator
import Foundation

/// The code of the "Moving bulk data: L2CAP channels" article.
enum MovingBulkData {
    /// A central whose channels are the simulator's socket pairs.
    static func simulatedCentral(bus: Bus, simulator: Simulator) async throws(BLEError) -> Central {
        // snippet.begin simulated-central
        var options = CentralOptions()
        options.l2capTransport = simulator.l2capTransport  // socket pairs instead of the kernel's
        let central = try await Central(bus: bus, options: options)
        // snippet.end
        return central
    }

    /// Sends `image` to `psm` of `peripheral` in SDUs as large as the channel takes; returns how many.
    static func upload(_ image: Data, to peripheral: Peripheral, psm: UInt16) async throws(BLEError) -> Int {
        // snippet.begin upload
        let channel = try await peripheral.openL2CAPChannel(psm: psm)
        defer { channel.close() }
        var sdus = 0
        var offset = image.startIndex
        while offset < image.endIndex {
            let end = min(offset + channel.sendMTU, image.endIndex)
            try await channel.send(image[offset..<end])  // waits while the peer grants no credits
            offset = end
            sdus += 1
        }
        // snippet.end
        return sdus
    }

    /// Publishes a PSM and echoes what the first central sends until it closes its channel.
    static func serveEcho(_ manager: PeripheralManager) async throws(BLEError) -> (
        psm: UInt16, echoed: Task<Int, Never>
    ) {
        // snippet.begin publish
        let publication = try await manager.publishL2CAPChannel()
        let psm = publication.psm  // tell centrals, e.g. in a characteristic's value
        let echoed = Task {
            var count = 0
            for await channel in publication.channels {
                for await sdu in channel.incoming {  // ends when the central closes the channel
                    try? await channel.send(sdu)
                    count += 1
                }
                break  // one central in this example
            }
            return count
        }
        // snippet.end
        return (psm, echoed)
    }
}
