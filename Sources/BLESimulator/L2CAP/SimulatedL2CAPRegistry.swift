import BlueZ
import DBus
import Glibc

/// What the simulator's L2CAP side holds across daemon restarts (a channel is the kernel's,
/// not bluetoothd's): the simulator's channel ends by link, published PSMs with the channels
/// waiting to be accepted, and sockets whose connect the SDK has not finished.
final class SimulatedL2CAPRegistry: Sendable {
    /// Linux's default L2CAP receive MTU (`L2CAP_DEFAULT_MTU`).
    static let defaultMTU: UInt16 = 672

    private struct Listening {
        let local: BluetoothAddress
        let psm: UInt16
        let receiveMTU: Int
        /// Written one byte per waiting channel: the listener's descriptor (its other end)
        /// turns readable, as a listening socket does.
        let wake: FileDescriptor
        var waiting: [L2CAPSocket] = []
    }

    private struct Key: Hashable {
        let adapter: BluetoothAddress
        let psm: UInt16
    }

    /// A test waiting for the last channel to close (``closed()``, `sdus` nil) or for its
    /// channels to have received `sdus` SDUs in all (``received(atLeast:total:)``).
    private struct Waiter {
        let sdus: Int?
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var ends: [UInt64: SimulatedL2CAPEnd] = [:]
        /// Who waits, by id.
        var waiters: [UInt64: Waiter] = [:]
        var next: UInt64 = 1
        var listening: [Key: Listening] = [:]
        /// By descriptor number, without the descriptor: an attempt the SDK gives up on
        /// (deadline, cancellation) never calls back, and its socket must still close.
        var connecting: [Int32: L2CAPSocket.Parameters] = [:]
    }

    private let state = PosixMutex(State())
    /// Holds every simulator reader (``Simulator/holdL2CAPReads(_:)``).
    let gate = L2CAPReadGate()

    func add(_ end: SimulatedL2CAPEnd) -> UInt64 {
        state.withLock { state in
            defer { state.next += 1 }
            state.ends[state.next] = end
            return state.next
        }
    }

    /// The simulator's end `id` closed (its reader saw the end and stopped: everything it read
    /// is counted).
    func remove(_ id: UInt64) {
        wake { state in
            state.ends[id] = nil
            return state.ends.isEmpty ? { $0.sdus == nil } : nil
        }
    }

    /// The simulator's ends have received `total` SDUs in all (``SimulatorStatistics``).
    func noteReceived(total: Int) {
        wake { _ in { $0.sdus.map { $0 <= total } ?? false } }
    }

    /// Returns once no channel is open (at once when none is), or when the task is cancelled.
    func closed() async {
        await wait(sdus: nil) { $0.ends.isEmpty }
    }

    /// Returns once the simulator's ends have received `count` SDUs in all (at once when
    /// `total()`, the count so far, is there), or when the task is cancelled.
    func received(atLeast count: Int, total: @escaping () -> Int) async {
        // The count is read once the waiter is parked, outside this lock: the daemon takes
        // this lock under its own (a link's channels hang up with it), so the count, under the
        // daemon's, is never read under this one. A count reached before the parking is seen
        // here; one reached after, by its `noteReceived`.
        let parked = {
            let now = total()
            if now >= count { self.noteReceived(total: now) }
        }
        await wait(sdus: count, done: { _ in false }, parked: parked)
    }

    /// Parks the caller as a ``Waiter`` unless `done` holds now (the check and the parking are
    /// under the lock every waker takes, so no wake-up falls between them), then runs `parked`.
    private func wait(sdus: Int?, done: (State) -> Bool, parked: () -> Void = {}) async {
        let id = state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if done(state) || Task.isCancelled { return true }
                    state.waiters[id] = Waiter(sdus: sdus, continuation: continuation)
                    return false
                }
                if ready { return continuation.resume() }
                parked()
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }

    /// Runs `change` under the lock; the waiters the predicate it returns accepts are resumed
    /// after it.
    private func wake(_ change: (inout State) -> ((Waiter) -> Bool)?) {
        let ready = state.withLock { state -> [Waiter] in
            guard let accepts = change(&state) else { return [] }
            let ready = state.waiters.filter { accepts($0.value) }
            for id in ready.keys { state.waiters[id] = nil }
            return Array(ready.values)
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Hangs up every channel between `adapter` (any adapter when nil) and `peer`.
    func hangUp(adapter: BluetoothAddress?, peer: BluetoothAddress) {
        let ends = state.withLock { state in
            state.ends.values.filter { $0.peer == peer && (adapter == nil || $0.adapter == adapter) }
        }
        for end in ends { end.hangUp() }
    }

    var openChannels: Int { state.withLock { $0.ends.count } }

    func setConnecting(_ socket: L2CAPSocket) {
        state.withLock { $0.connecting[socket.descriptor.rawValue] = L2CAPSocket.Parameters(socket) }
    }

    func takeConnecting(_ descriptor: FileDescriptor) -> L2CAPSocket? {
        state.withLock { $0.connecting.removeValue(forKey: descriptor.rawValue) }?.socket(descriptor)
    }

    // MARK: Published PSMs

    func listen(_ request: L2CAPListenRequest) throws(L2CAPTransportError) -> L2CAPListener {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { throw L2CAPTransportError(errno: errno, during: "making a listener") }
        for end in pipeEnds {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        let readable = FileDescriptor(owning: pipeEnds[0])
        let wake = FileDescriptor(owning: pipeEnds[1])
        let psm = try state.withLock { state throws(L2CAPTransportError) -> UInt16 in
            let taken = Set(state.listening.keys.filter { $0.adapter == request.local.address }.map(\.psm))
            let psm: UInt16
            if let asked = request.psm {
                guard L2CAPPSM.validRange.contains(asked) else {
                    throw L2CAPTransportError(errno: EINVAL, during: "binding PSM \(asked)")
                }
                guard !taken.contains(asked) else {
                    throw L2CAPTransportError(errno: EADDRINUSE, during: "binding PSM \(asked) on \(request.local)")
                }
                psm = asked
            } else {
                guard let free = L2CAPPSM.dynamicRange.first(where: { !taken.contains($0) }) else {
                    throw L2CAPTransportError(errno: EADDRINUSE, during: "binding a dynamic PSM on \(request.local)")
                }
                psm = free
            }
            state.listening[Key(adapter: request.local.address, psm: psm)] = Listening(
                local: request.local.address, psm: psm,
                receiveMTU: Int(request.receiveMTU ?? Self.defaultMTU), wake: wake)
            return psm
        }
        return L2CAPListener(descriptor: readable, psm: psm, local: request.local)
    }

    /// A remote central opens a channel to a published PSM: the SDK's end waits to be
    /// accepted; returns the simulator's end, or nil when nothing listens there.
    func connect(
        to adapter: BluetoothAddress, psm: UInt16, from central: L2CAPEndpoint, centralMTU: Int
    ) throws(L2CAPTransportError) -> (end: SimulatedL2CAPEnd, id: UInt64) {
        let pair = try SocketPair.make()
        let end = SimulatedL2CAPEnd(descriptor: pair.simulator, adapter: adapter, peer: central.address)
        let opened = state.withLock { state -> (FileDescriptor, UInt64)? in
            let key = Key(adapter: adapter, psm: psm)
            guard let listening = state.listening[key] else { return nil }
            state.listening[key]?.waiting.append(
                L2CAPSocket(
                    descriptor: pair.sdk, psm: psm, peer: central, sendMTU: centralMTU,
                    receiveMTU: listening.receiveMTU))
            defer { state.next += 1 }
            state.ends[state.next] = end
            return (listening.wake, state.next)
        }
        guard let (wake, id) = opened else {
            throw L2CAPTransportError(errno: ECONNREFUSED, during: "opening PSM 0x\(String(psm, radix: 16))")
        }
        var byte: UInt8 = 1
        _ = write(wake.rawValue, &byte, 1)
        return (end, id)
    }

    /// A central of the SDK opens a channel to a PSM the SDK published on another adapter
    /// (a bridged peripheral, see `Daemon+AdapterBridge.swift`): the two SDK ends are joined
    /// directly. Returns the central's end.
    func bridge(
        to adapter: L2CAPEndpoint, psm: UInt16, from central: L2CAPEndpoint, centralMTU: Int
    ) throws(L2CAPTransportError) -> L2CAPSocket {
        let (centralEnd, serverEnd) = try SocketPair.make()
        _ = fcntl(serverEnd.rawValue, F_SETFL, fcntl(serverEnd.rawValue, F_GETFL) | O_NONBLOCK)
        let opened = state.withLock { state -> (FileDescriptor, Int)? in
            let key = Key(adapter: adapter.address, psm: psm)
            guard let listening = state.listening[key] else { return nil }
            state.listening[key]?.waiting.append(
                L2CAPSocket(
                    descriptor: serverEnd, psm: psm, peer: central, sendMTU: centralMTU,
                    receiveMTU: listening.receiveMTU))
            return (listening.wake, listening.receiveMTU)
        }
        guard let (wake, serverMTU) = opened else {
            throw L2CAPTransportError(
                errno: ECONNREFUSED, during: "opening PSM 0x\(String(psm, radix: 16)) of \(adapter)")
        }
        var byte: UInt8 = 1
        _ = write(wake.rawValue, &byte, 1)
        return L2CAPSocket(
            descriptor: centralEnd, psm: psm, peer: adapter, sendMTU: serverMTU, receiveMTU: centralMTU)
    }

    func accept(_ listener: L2CAPListener) -> L2CAPSocket? {
        var byte: UInt8 = 0
        guard read(listener.descriptor.rawValue, &byte, 1) == 1 else { return nil }
        return state.withLock { state -> L2CAPSocket? in
            let key = Key(adapter: listener.local.address, psm: listener.psm)
            guard state.listening[key]?.waiting.isEmpty == false else { return nil }
            return state.listening[key]?.waiting.removeFirst()
        }
    }

    func stopListening(_ listener: L2CAPListener) {
        // The channels still waiting are closed with it: their centrals read end of file.
        _ = state.withLock { state in
            state.listening.removeValue(forKey: Key(adapter: listener.local.address, psm: listener.psm))
        }
    }

    /// The PSMs published on `adapter`, in increasing order.
    func published(on adapter: BluetoothAddress) -> [UInt16] {
        state.withLock { state in state.listening.keys.filter { $0.adapter == adapter }.map(\.psm).sorted() }
    }
}

extension L2CAPSocket {
    /// A socket's description without the socket.
    struct Parameters: Sendable {
        let psm: UInt16
        let peer: L2CAPEndpoint
        let sendMTU: Int
        let receiveMTU: Int

        init(_ socket: L2CAPSocket) {
            psm = socket.psm
            peer = socket.peer
            sendMTU = socket.sendMTU
            receiveMTU = socket.receiveMTU
        }

        func socket(_ descriptor: FileDescriptor) -> L2CAPSocket {
            L2CAPSocket(descriptor: descriptor, psm: psm, peer: peer, sendMTU: sendMTU, receiveMTU: receiveMTU)
        }
    }
}
