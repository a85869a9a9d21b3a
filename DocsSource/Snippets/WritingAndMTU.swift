import BLE
import Foundation

/// The code of the "Writing and MTU" article.
enum WritingAndMTU {
    /// Sends `payload` without response in chunks that fit the link.
    static func sendChunked(_ payload: Data, to characteristic: Characteristic) async throws(BLEError) -> Int {
        // snippet.begin write-chunks
        let limit = await characteristic.peripheral.maximumWriteLength(for: .withoutResponse)
        var chunks = 0
        var offset = payload.startIndex
        while offset < payload.endIndex {
            let end = min(offset + limit, payload.endIndex)
            try await characteristic.write(payload[offset..<end], type: .withoutResponse)
            offset = end
            chunks += 1
        }
        // snippet.end
        return chunks
    }

    /// Streams `packets` through an AcquireWrite channel, which suspends while the socket is full.
    static func stream(_ packets: [Data], to characteristic: Characteristic) async throws(BLEError) -> UInt16 {
        // snippet.begin write-channel
        let channel = try await characteristic.openWriteChannel()  // AcquireWrite: the exact MTU
        defer { channel.close() }
        for packet in packets {
            try await channel.write(packet)  // suspends while the socket is full: real flow control
        }
        // snippet.end
        return channel.mtu
    }
}
