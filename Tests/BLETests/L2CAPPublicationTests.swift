import BLE
import BLESimulator
import Foundation
import Testing

/// L2CAP channels a peripheral manager publishes, opened by the simulator's remote central.
@Suite("L2CAP channels, peripheral role")
struct L2CAPPublicationTests {
    /// Runs `body` with a manager that uses the simulator's channels.
    static func withManager(_ body: (SimulatorFixture, PeripheralManager) async throws -> Void) async throws {
        try await SimulatorFixture.withManager(
            configure: { fixture, options in
                options.l2capTransport = fixture.simulator.l2capTransport
            }, body)
    }

    @Test("a published PSM accepts a central's channel, names the central, carries data both ways")
    func publishAndAccept() async throws {
        try await Self.withManager { fixture, manager in
            let publication = try await manager.publishL2CAPChannel()
            #expect((0x0080...0x00FF).contains(publication.psm))
            #expect(await manager.publishedL2CAPChannels == [publication.psm])
            #expect(fixture.simulator.publishedL2CAPChannels() == [publication.psm])
            let remote = try fixture.simulator.remoteOpenL2CAPChannel(psm: publication.psm, mtu: 300)
            var channels = publication.channels.makeAsyncIterator()
            let channel = try #require(await channels.next())
            #expect(channel.central?.address == Simulator.defaultRemoteCentral)
            #expect(channel.sendMTU == 300 && channel.psm == publication.psm)
            #expect(remote.send(Data("ping".utf8)))
            var incoming = channel.incoming.makeAsyncIterator()
            #expect(await incoming.next() == Data("ping".utf8))
            try await channel.send(Data("pong".utf8))
            var answers = remote.incoming.makeAsyncIterator()
            #expect(await answers.next() == Data("pong".utf8))
            await expectCode(.invalidArguments) { try await channel.send(Data(count: 301)) }
            remote.close()
            #expect(await incoming.next() == nil, "the central closed it")
            #expect(channel.endError?.code == .disconnected)
        }
    }

    @Test("a PSM published twice, or out of range, is refused; unpublishing ends the channels sequence")
    func publishErrors() async throws {
        try await Self.withManager { fixture, manager in
            let fixed = try await manager.publishL2CAPChannel(encrypted: true, psm: 0x00C0)
            #expect(fixed.psm == 0x00C0 && fixed.encrypted)
            await expectCode(.alreadyExists) { _ = try await manager.publishL2CAPChannel(psm: 0x00C0) }
            await expectCode(.invalidArguments) { _ = try await manager.publishL2CAPChannel(psm: 0x0100) }
            let dynamic = try await manager.publishL2CAPChannel()
            #expect(dynamic.psm != fixed.psm)
            await manager.unpublishL2CAPChannel(fixed.psm)
            var channels = fixed.channels.makeAsyncIterator()
            #expect(await channels.next() == nil)
            #expect(await manager.publishedL2CAPChannels == [dynamic.psm])
            #expect(throws: RemoteCentralError.self) {
                _ = try fixture.simulator.remoteOpenL2CAPChannel(psm: fixed.psm)
            }
            let again = try await manager.publishL2CAPChannel(psm: 0x00C0)
            #expect(again.psm == 0x00C0, "an unpublished PSM can be published again")
        }
    }

    @Test("closing the manager unpublishes everything; an open channel is the app's to close")
    func closeUnpublishes() async throws {
        try await Self.withManager { fixture, manager in
            let publication = try await manager.publishL2CAPChannel()
            let remote = try fixture.simulator.remoteOpenL2CAPChannel(psm: publication.psm)
            var channels = publication.channels.makeAsyncIterator()
            let channel = try #require(await channels.next())
            await manager.close()
            #expect(fixture.simulator.publishedL2CAPChannels().isEmpty)
            #expect(await channels.next() == nil)
            #expect(remote.send(Data([1])))
            var incoming = channel.incoming.makeAsyncIterator()
            #expect(await incoming.next() == Data([1]))
            channel.close()
            var answers = remote.incoming.makeAsyncIterator()
            #expect(await answers.next() == nil, "the central reads the end")
        }
    }
    @Test("a central closing the channel while the manager's send waits for room fails that send, typed")
    func peerClosesMidSend() async throws {
        try await Self.withManager { fixture, manager in
            let publication = try await manager.publishL2CAPChannel()
            let remote = try fixture.simulator.remoteOpenL2CAPChannel(psm: publication.psm, mtu: 4096)
            var channels = publication.channels.makeAsyncIterator()
            let channel = try #require(await channels.next())
            fixture.simulator.holdL2CAPReads(true)
            _ = try await L2CAPChannelTests.fill(channel)
            // The socket is full: this send waits for room until the central closes.
            let sender = Task {
                while true { try await channel.send(Data(count: 4096)) }
            }
            remote.close()
            guard case .failure(let error) = await sender.result else {
                Issue.record("the sender cannot end without an error")
                return
            }
            #expect((error as? BLEError)?.code == .disconnected, "\(error)")
            #expect(channel.endError?.code == .disconnected)
            fixture.simulator.holdL2CAPReads(false)
            #expect(await manager.publishedL2CAPChannels == [publication.psm], "the manager goes on")
        }
    }
}
