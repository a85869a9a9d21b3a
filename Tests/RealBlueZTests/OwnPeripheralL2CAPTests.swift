import BLE
import Foundation
import Testing

extension AgainstBluetoothd {
    /// L2CAP channels between our own two halves: the ``PeripheralManager`` on hci1 publishes
    /// a PSM, the ``Central`` on hci0 opens channels to it over the link bluetoothd made. On
    /// the real daemon the kernel carries them (two btvirt controllers); on the simulator, its
    /// socket pairs.
    @Suite("L2CAP channels between our central and our PeripheralManager")
    struct OwnPeripheralL2CAPTests {
        static func pattern(_ index: Int, size: Int) -> Data {
            Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &+ index &* 31) })
        }

        /// Echoes every SDU of every channel accepted on `publication`.
        static func echo(_ publication: L2CAPPublication) -> Task<Void, Never> {
            Task {
                await withTaskGroup(of: Void.self) { group in
                    for await channel in publication.channels {
                        group.addTask {
                            for await sdu in channel.incoming {
                                do throws(BLEError) {
                                    try await channel.send(sdu)
                                } catch {
                                    // A channel closing ends the echo; a send that waited out its
                                    // deadline is a fault of its own, with what it waited on.
                                    if error.code == .timeout { Issue.record("the echo's send: \(error)") }
                                    return
                                }
                            }
                        }
                    }
                }
            }
        }

        @Test("a channel to the manager's PSM carries SDUs both ways, up to the MTU, naming each side")
        func echo() async throws {
            try await Stage.runOwnConnected { _, own, peripheral in
                var options = L2CAPChannelOptions()
                options.receiveMTU = 2048
                let publication = try await own.manager.publishL2CAPChannel(options: options)
                var accepted = publication.channels.makeAsyncIterator()
                let channel = try await peripheral.openL2CAPChannel(psm: publication.psm, options: options)
                let server = try #require(await accepted.next())
                #expect(server.central == own.central, "the accepted channel names our central")
                #expect(channel.peripheral == peripheral.id)
                #expect(
                    channel.sendMTU == 2048 && server.sendMTU == 2048, "each side's receive MTU is the other's send MTU"
                )
                let sizes = [1, 23, 250, 1000, 2048]
                for (index, size) in sizes.enumerated() { try await channel.send(Self.pattern(index, size: size)) }
                var incoming = server.incoming.makeAsyncIterator()
                for (index, size) in sizes.enumerated() {
                    #expect(await incoming.next() == Self.pattern(index, size: size), "SDU \(index)")
                }
                try await server.send(Data("back".utf8))
                var replies = channel.incoming.makeAsyncIterator()
                #expect(await replies.next() == Data("back".utf8))
                let tooLarge = await #expect(throws: BLEError.self) { try await channel.send(Data(count: 2049)) }
                #expect(tooLarge?.code == .invalidArguments)
                channel.close()
                #expect(await incoming.next() == nil, "the manager's end reads the close")
                await own.manager.unpublishL2CAPChannel(publication.psm)
            }
        }

        @Test("a burst far beyond the socket buffers arrives whole and in order; the sender waits for credits")
        func burst() async throws {
            try await Stage.runOwnConnected { _, own, peripheral in
                let publication = try await own.manager.publishL2CAPChannel()
                let echoing = Self.echo(publication)
                defer { echoing.cancel() }
                let channel = try await peripheral.openL2CAPChannel(psm: publication.psm)
                let size = min(channel.sendMTU, 512)
                let count = 1000  // 512 KB each way: far beyond the kernel's socket buffers
                let sender = Task {
                    for index in 0..<count { try await channel.send(Self.pattern(index, size: size)) }
                }
                var received = 0
                for await sdu in channel.incoming {
                    guard sdu == Self.pattern(received, size: size) else {
                        Issue.record("SDU \(received) came back altered or out of order")
                        break
                    }
                    received += 1
                    if received == count { break }
                }
                try await sender.value
                #expect(received == count)
                channel.close()
                await own.manager.unpublishL2CAPChannel(publication.psm)
            }
        }

        @Test("the link dropping mid-transfer ends both ends with typed errors; the manager publishes on")
        func linkDrop() async throws {
            try await Stage.runOwnConnected { _, own, peripheral in
                let publication = try await own.manager.publishL2CAPChannel()
                var accepted = publication.channels.makeAsyncIterator()
                let channel = try await peripheral.openL2CAPChannel(psm: publication.psm)
                let server = try #require(await accepted.next())
                let sender = Task {
                    var index = 0
                    while true {
                        try await channel.send(Self.pattern(index, size: min(channel.sendMTU, 200)))
                        index += 1
                    }
                }
                var incoming = server.incoming.makeAsyncIterator()
                _ = await incoming.next()
                try await own.dropLink()
                guard case .failure(let error) = await sender.result else {
                    Issue.record("the sender cannot end without an error")
                    return
                }
                #expect((error as? BLEError)?.code == .disconnected, "\(error)")
                while await incoming.next() != nil {}
                #expect(server.endError?.code == .disconnected)
                #expect(channel.endError?.code == .disconnected)
                #expect(await own.manager.publishedL2CAPChannels == [publication.psm])
                await own.manager.unpublishL2CAPChannel(publication.psm)
            }
        }

        @Test("a PSM nobody publishes is refused by the peer")
        func refused() async throws {
            try await Stage.runOwnConnected { _, _, peripheral in
                let refusal = await #expect(throws: BLEError.self) {
                    _ = try await peripheral.openL2CAPChannel(psm: 0x00F7)
                }
                #expect(refusal?.code == .connectionFailed, "\(String(describing: refusal))")
                #expect(await peripheral.isConnected, "a refused channel leaves the link up")
            }
        }
    }
}
