import BlueZ
import DBus
import Foundation

extension Simulator {
    /// L2CAP channels for the SDK's tests: give it to `CentralOptions`'s and
    /// `PeripheralManagerOptions`'s `l2capTransport` (the kernel's sockets cannot be
    /// intercepted, so the simulator hands out socket pairs instead; see
    /// ``SimulatedL2CAPTransport``).
    public var l2capTransport: SimulatedL2CAPTransport { SimulatedL2CAPTransport(core: core) }

    /// Stops (`true`) or restarts (`false`) the simulator reading every L2CAP channel, as a
    /// peer that stops granting credits: the other side's sends then wait, and nothing is lost.
    public func holdL2CAPReads(_ hold: Bool) {
        core.l2cap.gate.set(held: hold)
    }

    /// L2CAP channels open now between the simulator and the SDK.
    public var openL2CAPChannels: Int { core.l2cap.openChannels }

    /// Returns once no L2CAP channel to the simulator is open (at once when none is), or when the
    /// task is cancelled: a closed channel's data has all been read and counted in
    /// ``statistics`` by then, and a dropped link's channels are gone.
    public func l2capChannelsClosed() async {
        await core.l2cap.closed()
    }

    /// Returns once virtual peripherals have received `count` SDUs on L2CAP channels in all
    /// (``SimulatorStatistics/l2capSDUsReceived``; at once when they have), or when the task is
    /// cancelled: a test learns that a peripheral has read (and an echo server answered) what
    /// it sent, without polling.
    public func l2capSDUsReceived(atLeast count: Int) async {
        await core.l2cap.received(atLeast: count) { [core] in core.state.withLock { $0.statistics.l2capSDUsReceived } }
    }

    /// The PSMs published now on the adapter with index `adapter` (`hci0` is 0).
    public func publishedL2CAPChannels(adapter: Int = 0) -> [UInt16] {
        guard let address = adapterAddress(adapter) else { return [] }
        return core.l2cap.published(on: address)
    }

    /// A simulated remote central opens a channel to a PSM the SDK published on adapter
    /// `adapter`, as a peripheral manager's app sees it from the air.
    ///
    /// - Parameters:
    ///   - mtu: the central's receive MTU: the largest SDU the SDK's end may send.
    /// - Throws: ``RemoteCentralError/Code/notFound`` when nothing is published on `psm` (the
    ///   channel is refused); ``RemoteCentralError/Code/invalidArgument`` for an adapter that
    ///   does not exist or a malformed address.
    public func remoteOpenL2CAPChannel(
        psm: UInt16, central: String = defaultRemoteCentral, adapter: Int = 0, mtu: Int = 512
    ) throws(RemoteCentralError) -> SimulatedL2CAPChannel {
        guard let address = adapterAddress(adapter) else {
            throw RemoteCentralError(.invalidArgument, message: "no adapter \(adapter)")
        }
        guard let centralAddress = try? BluetoothAddress(central) else {
            throw RemoteCentralError(.invalidArgument, message: "\(central) is not a Bluetooth address")
        }
        do {
            let (end, id) = try core.l2cap.connect(
                to: address, psm: psm, from: L2CAPEndpoint(address: centralAddress), centralMTU: mtu)
            return SimulatedL2CAPChannel(end: end, id: id, registry: core.l2cap)
        } catch {
            throw RemoteCentralError(.notFound, message: error.message)
        }
    }

    private func adapterAddress(_ index: Int) -> BluetoothAddress? {
        core.state.withLock { state in state.adapters.indices.contains(index) ? state.adapters[index].address : nil }
    }
}

/// The simulated remote central's end of a channel it opened to the SDK
/// (``Simulator/remoteOpenL2CAPChannel(psm:central:adapter:mtu:)``).
public final class SimulatedL2CAPChannel: Sendable {
    private let end: SimulatedL2CAPEnd
    /// What the SDK's end sent, in order; ends when either side closes the channel.
    public let incoming: AsyncStream<Data>

    init(end: SimulatedL2CAPEnd, id: UInt64, registry: SimulatedL2CAPRegistry) {
        self.end = end
        let (incoming, continuation) = AsyncStream.makeStream(of: Data.self)
        self.incoming = incoming
        end.serve(mtu: 65_535, gate: registry.gate) { sdu, _ in
            continuation.yield(sdu)
        } ended: {
            continuation.finish()
            registry.remove(id)
        }
    }

    /// Sends one SDU to the SDK, waiting while it does not read; false once the channel is closed.
    @discardableResult
    public func send(_ sdu: Data) -> Bool { end.send(sdu) }

    /// Closes the channel: the SDK's end reads end of file.
    public func close() { end.hangUp() }
}
