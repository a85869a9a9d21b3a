import BLE
import BLESimulator
import Foundation
import Testing

/// L2CAP channels a central opens, against the simulator's channels (its `l2capTransport`)
/// on a private bus; the kernel path runs in the real-BlueZ suite.
@Suite("L2CAP channels, central role")
struct L2CAPChannelTests {
    static let echoPSM: UInt16 = 0x0080
    static let sinkPSM: UInt16 = 0x0081

    static func peripheral() -> VirtualPeripheral {
        var peripheral = SimulatorFixture.heartRateMonitor()
        peripheral.l2capServers = [
            VirtualL2CAPServer(psm: echoPSM, behavior: .echo, mtu: 512),
            VirtualL2CAPServer(psm: sinkPSM, behavior: .sink, mtu: 2048),
        ]
        return peripheral
    }

    /// A central using the simulator's channels, connected to ``peripheral()``.
    static func connected(_ fixture: SimulatorFixture) async throws -> (Central, Peripheral) {
        var options = CentralOptions()
        options.l2capTransport = fixture.simulator.l2capTransport
        let central = try await fixture.central(options: options)
        try await central.waitUntilPoweredOn(timeout: .seconds(5))
        let peripheral = try await central.connect(
            try PeripheralID(address: SimulatorFixture.heartRateAddress), timeout: .seconds(5))
        return (central, peripheral)
    }

    static func pattern(_ index: Int, size: Int) -> Data {
        Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &+ index &* 7) })
    }

    @Test("SDUs go both ways in order, up to the send MTU; the channel names its peer and MTUs")
    func echo() async throws {
        try await SimulatorFixture.run(peripherals: [Self.peripheral()]) { fixture in
            let (central, peripheral) = try await Self.connected(fixture)
            var options = L2CAPChannelOptions()
            options.receiveMTU = 1024
            let channel = try await peripheral.openL2CAPChannel(psm: Self.echoPSM, options: options)
            #expect(channel.sendMTU == 512 && channel.receiveMTU == 1024)
            #expect(channel.psm == Self.echoPSM && channel.peripheral == peripheral.id && channel.isOpen)
            let sizes = [1, 0, 23, 247, 511, 512]
            var iterator = channel.incoming.makeAsyncIterator()
            for (index, size) in sizes.enumerated() { try await channel.send(Self.pattern(index, size: size)) }
            for (index, size) in sizes.enumerated() {
                #expect(await iterator.next() == Self.pattern(index, size: size))
            }
            await #expect(throws: BLEError.self) { try await channel.send(Data(count: 513)) }
            try await channel.send(Data([0x42]))
            #expect(await iterator.next() == Data([0x42]), "an SDU over the MTU fails alone")
            channel.close()
            #expect(await iterator.next() == nil)
            #expect(channel.endError?.code == .cancelled && !channel.isOpen)
            await central.close()
        }
    }

    @Test("a PSM nobody publishes is refused, one out of range is invalid, a disconnected peripheral has no channel")
    func refusals() async throws {
        try await SimulatorFixture.run(peripherals: [Self.peripheral()]) { fixture in
            let (central, peripheral) = try await Self.connected(fixture)
            await expectCode(.connectionFailed) { _ = try await peripheral.openL2CAPChannel(psm: 0x00F0) }
            await expectCode(.invalidArguments) { _ = try await peripheral.openL2CAPChannel(psm: 0) }
            await expectCode(.invalidArguments) { _ = try await peripheral.openL2CAPChannel(psm: 0x0100) }
            try await peripheral.disconnect()
            await expectCode(.notConnected) { _ = try await peripheral.openL2CAPChannel(psm: Self.echoPSM) }
            #expect(fixture.simulator.openL2CAPChannels == 0)
            await central.close()
        }
    }

    @Test("a full channel holds sends until the peer reads again; every SDU arrives")
    func backPressure() async throws {
        try await SimulatorFixture.run(peripherals: [Self.peripheral()]) { fixture in
            let (central, peripheral) = try await Self.connected(fixture)
            let channel = try await peripheral.openL2CAPChannel(psm: Self.sinkPSM)
            fixture.simulator.holdL2CAPReads(true)
            let filled = try await Self.fill(channel)
            // The socket is full: these sends can only go out once the peer reads again.
            let count = 256
            let sender = Task {
                for index in 0..<count { try await channel.send(Self.pattern(index, size: 2048)) }
            }
            fixture.simulator.holdL2CAPReads(false)
            try await sender.value
            channel.close()
            await fixture.simulator.l2capChannelsClosed()
            #expect(fixture.simulator.statistics.l2capSDUsReceived == filled + count)
            #expect(fixture.simulator.statistics.l2capBytesReceived == (filled + count) * 2048)
            await central.close()
        }
    }

    /// The central closes right after its last sends, with echoes of earlier ones unread: the
    /// simulator's socket reports that as a reset, once and before those SDUs, and its reader
    /// stopped there, losing them (as the SDK's own reader did on the peer's hang-up).
    @Test("SDUs sent right before closing reach the peripheral, though its echoes wait unread at the central")
    func lastSDUsBeforeClose() async throws {
        try await SimulatorFixture.run(peripherals: [Self.peripheral()]) { fixture in
            let (central, peripheral) = try await Self.connected(fixture)
            var options = L2CAPChannelOptions()
            options.receiveBufferSize = 1
            let channel = try await peripheral.openL2CAPChannel(psm: Self.echoPSM, options: options)
            // Nobody reads `incoming`: one echo is buffered, the rest stay in the socket. The
            // simulator echoes an SDU before it reads the next, so once it received the fourth,
            // the first three echoes were sent.
            for index in 0..<4 { try await channel.send(Self.pattern(index, size: 16)) }
            await fixture.simulator.l2capSDUsReceived(atLeast: 4)
            fixture.simulator.holdL2CAPReads(true)
            for index in 4..<9 { try await channel.send(Self.pattern(index, size: 16)) }
            channel.close()
            fixture.simulator.holdL2CAPReads(false)
            await fixture.simulator.l2capChannelsClosed()
            #expect(fixture.simulator.statistics.l2capSDUsReceived == 9)
            await central.close()
        }
    }

    /// Sends 2,048-byte SDUs until one waits for room (the peer reads nothing): a send that
    /// finds room returns at once, whatever the machine's load, so only a full socket lets the
    /// short deadline pass. Returns how many went out.
    static func fill(_ channel: L2CAPChannel) async throws(BLEError) -> Int {
        var sent = 0
        while true {
            do {
                try await channel.send(Self.pattern(sent, size: 2048), timeout: .milliseconds(20))
                sent += 1
            } catch {
                if error.code == .timeout { return sent }
                throw error
            }
        }
    }

    @Test("a send waiting for room is cancelled or times out without going out; the channel goes on")
    func cancelAndDeadline() async throws {
        try await SimulatorFixture.run(peripherals: [Self.peripheral()]) { fixture in
            let (central, peripheral) = try await Self.connected(fixture)
            let channel = try await peripheral.openL2CAPChannel(psm: Self.sinkPSM)
            fixture.simulator.holdL2CAPReads(true)
            // The last send of the fill waited for room and passed its deadline.
            let sent = try await Self.fill(channel)
            let waiting = Task { try await channel.send(Self.pattern(0, size: 2048)) }
            waiting.cancel()
            guard case .failure(let error) = await waiting.result else {
                Issue.record("a send into a full socket cannot succeed while the peer reads nothing")
                return
            }
            #expect((error as? BLEError)?.code == .cancelled)
            fixture.simulator.holdL2CAPReads(false)
            try await channel.send(Data([1]))
            #expect(channel.isOpen)
            channel.close()
            await fixture.simulator.l2capChannelsClosed()
            // Every send that returned arrived, and nothing else: neither the cancelled one
            // nor the one past its deadline went out, not even in part.
            #expect(fixture.simulator.statistics.l2capSDUsReceived == sent + 1)
            #expect(fixture.simulator.statistics.l2capBytesReceived == sent * 2048 + 1)
            await central.close()
        }
    }

    @Test("the link dropping ends the channel: what arrived is read, then the end; sends fail disconnected")
    func linkLoss() async throws {
        try await SimulatorFixture.run(peripherals: [Self.peripheral()]) { fixture in
            let (central, peripheral) = try await Self.connected(fixture)
            let channel = try await peripheral.openL2CAPChannel(psm: Self.echoPSM)
            try await channel.send(Data([7]))
            var iterator = channel.incoming.makeAsyncIterator()
            #expect(await iterator.next() == Data([7]))
            try fixture.simulator.dropLink(address: SimulatorFixture.heartRateAddress, after: .zero)
            #expect(await iterator.next() == nil)
            #expect(channel.endError?.code == .disconnected)
            await expectCode(.disconnected) { try await channel.send(Data([8])) }
            await fixture.simulator.l2capChannelsClosed()
            #expect(fixture.simulator.openL2CAPChannels == 0)
            await central.close()
        }
    }

    @Test("a slow reader loses nothing: the socket is no longer read while its buffer is full")
    func slowReader() async throws {
        try await SimulatorFixture.run(peripherals: [Self.peripheral()]) { fixture in
            let (central, peripheral) = try await Self.connected(fixture)
            var options = L2CAPChannelOptions()
            options.receiveBufferSize = 4
            let channel = try await peripheral.openL2CAPChannel(psm: Self.echoPSM, options: options)
            let count = 600
            let sender = Task { for index in 0..<count { try await channel.send(Self.pattern(index, size: 64)) } }
            var received = 0
            for await sdu in channel.incoming {
                #expect(sdu == Self.pattern(received, size: 64))
                received += 1
                if received == count { break }
            }
            try await sender.value
            #expect(received == count)
            channel.close()
            await central.close()
        }
    }
}

/// Expects `body` to throw a ``BLEError`` with `code`.
func expectCode(
    _ code: BLEError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as BLEError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}
