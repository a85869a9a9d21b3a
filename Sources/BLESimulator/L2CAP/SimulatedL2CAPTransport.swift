import BlueZ
import DBus
import Foundation
import Glibc

/// The simulator's L2CAP channels, for the SDK's ``L2CAPTransport`` seam: a channel is a
/// Unix `SOCK_SEQPACKET` socket pair (SDU boundaries and a blocked sender kept, as on an L2CAP
/// socket), opened only where the kernel would open one, and hung up when its link drops.
///
/// - A central (``startConnect(_:)``) reaches a virtual peripheral's
///   ``VirtualPeripheral/l2capServers`` over a connected link; anything else is refused as the
///   kernel refuses it (no link: unreachable; no server on the PSM: connection refused).
/// - A peripheral manager (``listen(_:)``) publishes a PSM that a simulated remote central
///   opens channels to (``Simulator/remoteOpenL2CAPChannel(psm:central:adapter:mtu:)``).
public final class SimulatedL2CAPTransport: L2CAPTransport {
    private let core: SimulatorCore

    init(core: SimulatorCore) { self.core = core }

    /// Checks what the kernel would (a powered adapter, a link, a server on the PSM) and
    /// hands out one end of a socket pair, connected at once.
    public func startConnect(_ request: L2CAPConnectRequest) throws(L2CAPTransportError) -> FileDescriptor {
        let receiveMTU = Int(request.receiveMTU ?? SimulatedL2CAPRegistry.defaultMTU)
        switch try target(of: request) {
        case .bridged(let adapter):
            let socket = try core.l2cap.bridge(
                to: adapter, psm: request.psm, from: request.local, centralMTU: receiveMTU)
            core.l2cap.setConnecting(socket)
            return socket.descriptor
        case .virtual(let server):
            let pair = try SocketPair.make()
            let end = SimulatedL2CAPEnd(
                descriptor: pair.simulator, adapter: request.local.address, peer: request.peer.address)
            let registration = core.l2cap.add(end)
            end.serve(mtu: server.mtu, gate: core.l2cap.gate) { [core] sdu, end in
                let total = core.state.withLock { state -> Int in
                    state.statistics.l2capSDUsReceived += 1
                    state.statistics.l2capBytesReceived += sdu.count
                    return state.statistics.l2capSDUsReceived
                }
                core.l2cap.noteReceived(total: total)
                if server.behavior == .echo { end.send(sdu) }
            } ended: { [registry = core.l2cap] in
                registry.remove(registration)
            }
            core.l2cap.setConnecting(
                L2CAPSocket(
                    descriptor: pair.sdk, psm: request.psm, peer: request.peer, sendMTU: server.mtu,
                    receiveMTU: receiveMTU))
            return pair.sdk
        }
    }

    /// Who serves a channel: a virtual peripheral's server, or the SDK's own publication on
    /// another adapter (a peripheral bridged from that adapter's registrations).
    private enum Target {
        case virtual(VirtualL2CAPServer)
        case bridged(L2CAPEndpoint)
    }

    /// Checks what the kernel would: a powered adapter, a link to the peer, a server on the PSM.
    private func target(of request: L2CAPConnectRequest) throws(L2CAPTransportError) -> Target {
        try core.state.withLock { state throws(L2CAPTransportError) -> Target in
            guard let adapter = state.adapters.first(where: { $0.address == request.local.address }), adapter.powered
            else { throw L2CAPTransportError(errno: ENETDOWN, during: "opening a channel from \(request.local)") }
            let linked = state.devices.values.contains {
                $0.adapterIndex == adapter.index && $0.address == request.peer.address && $0.connected
            }
            guard linked else {
                throw L2CAPTransportError(errno: ENOTCONN, during: "opening a channel to \(request.peer)")
            }
            let record = state.peripherals[request.peer.address]
            if let served = record?.servedBy, state.adapters.indices.contains(served) {
                return .bridged(L2CAPEndpoint(address: state.adapters[served].address))
            }
            guard let server = record?.definition.l2capServers.first(where: { $0.psm == request.psm }) else {
                throw L2CAPTransportError(
                    errno: ECONNREFUSED, during: "opening PSM 0x\(String(request.psm, radix: 16)) of \(request.peer)")
            }
            state.statistics.l2capChannelsOpened += 1
            return .virtual(server)
        }
    }

    /// The channel ``startConnect(_:)`` made.
    public func finishConnect(_ descriptor: FileDescriptor, _ request: L2CAPConnectRequest) throws(L2CAPTransportError)
        -> L2CAPSocket
    {
        guard let socket = core.l2cap.takeConnecting(descriptor) else {
            throw L2CAPTransportError(errno: ECONNREFUSED, during: "opening PSM \(request.psm) of \(request.peer)")
        }
        return socket
    }

    /// Publishes the PSM for ``Simulator/remoteOpenL2CAPChannel(psm:central:adapter:mtu:)``.
    public func listen(_ request: L2CAPListenRequest) throws(L2CAPTransportError) -> L2CAPListener {
        let known = core.state.withLock { state in state.adapters.contains { $0.address == request.local.address } }
        guard known else { throw L2CAPTransportError(errno: EADDRNOTAVAIL, during: "binding to \(request.local)") }
        return try core.l2cap.listen(request)
    }

    /// The oldest channel a remote central opened and nobody accepted yet.
    public func accept(_ listener: L2CAPListener) throws(L2CAPTransportError) -> L2CAPSocket? {
        core.l2cap.accept(listener)
    }

    /// Unpublishes the PSM; channels waiting to be accepted are closed.
    public func stopListening(_ listener: L2CAPListener) {
        core.l2cap.stopListening(listener)
    }
}
