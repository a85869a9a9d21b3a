import BlueZ
import DBus
import Dispatch
import Foundation
import Glibc
import Synchronization

/// The shell of an ``L2CAPChannel``: feeds ``L2CAPChannelMachine`` what the socket and the
/// app did and runs its actions. Writes are non-blocking syscalls made under the lock (so
/// SDUs keep the order of their sends); continuations are resumed after it is released.
final class L2CAPChannelCore: Sendable {
    typealias Machine = L2CAPChannelMachine

    private struct State {
        var machine: Machine
        var payloads: [UInt64: Data] = [:]
        var senders: [UInt64: CheckedContinuation<Result<Void, BLEError>, Never>] = [:]
        /// Outcomes of sends whose caller has not suspended yet (or never will: the fast path).
        var outcomes: [UInt64: Result<Void, BLEError>] = [:]
        var buffer: [Data] = []
        var bufferHead = 0
        var reader: CheckedContinuation<Data?, Never>?
        var nextSend: UInt64 = 1
        var endError: BLEError?
    }

    /// What to do once the lock is released.
    private enum Resumption {
        case sender(CheckedContinuation<Result<Void, BLEError>, Never>, Result<Void, BLEError>)
        case reader(CheckedContinuation<Data?, Never>, Data?)
    }

    private let state: PosixMutex<State>
    private let socket = PosixMutex<WatchedSocket?>(nil)
    /// The socket reported a reset (the peer is gone): what it still holds is read, then the
    /// channel ends. Kept across reads, which a slow reader pauses.
    private let resetSeen = Atomic<Bool>(false)
    private let receiveMTU: Int
    private let describe: String
    private let diagnostics: BLEDiagnostics?

    init(
        _ l2cap: L2CAPSocket, bufferLimit: Int, describe: String, diagnostics: BLEDiagnostics?
    ) {
        state = PosixMutex(State(machine: Machine(sendMTU: l2cap.sendMTU, bufferLimit: bufferLimit)))
        receiveMTU = max(l2cap.receiveMTU, 1)
        self.describe = describe
        self.diagnostics = diagnostics
        let watched = WatchedSocket(
            l2cap.descriptor, diagnostics: diagnostics, onReadable: { [weak self] in self?.readable() },
            onWritable: { [weak self] in self?.event { $0.writable() } })
        socket.withLock { $0 = watched }
        watched.watchReadable(true)
    }

    deinit {
        socket.withLock { $0 }?.cancel()
        let leftover = state.withLock { state -> [Resumption] in
            var resumptions = state.senders.values.map {
                Resumption.sender($0, .failure(BLEError(.cancelled, message: "the channel was released")))
            }
            if let reader = state.reader { resumptions.append(.reader(reader, nil)) }
            return resumptions
        }
        Self.resume(leftover)
    }

    var isOpen: Bool { state.withLock { !$0.machine.isEnded } }
    var endError: BLEError? { state.withLock { $0.endError } }

    // MARK: Sending

    func send(_ sdu: Data, deadline: ContinuousClock.Instant) async throws(BLEError) {
        if Task.isCancelled { throw BLEError(.cancelled, message: "the task was cancelled") }
        let id = state.withLock { state -> UInt64 in
            defer { state.nextSend += 1 }
            return state.nextSend
        }
        // Written at once while the socket has room: no suspension, no timer.
        if let outcome = event(payload: (id, sdu), { $0.send(id, size: sdu.count) }, taking: id) {
            return try outcome.get()
        }
        let timer = DispatchWorkItem { [weak self] in self?.event { $0.abandon(id, .timedOut) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.interval(until: deadline), execute: timer)
        defer { timer.cancel() }
        let site = diagnostics.willSuspend()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Result<Void, BLEError>? in
                    if let outcome = state.outcomes.removeValue(forKey: id) { return outcome }
                    state.senders[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: { [weak self] in
            self?.event { $0.abandon(id, .cancelled) }
        }
        diagnostics.didResume(site)
        try result.get()
    }

    private static func interval(until deadline: ContinuousClock.Instant) -> DispatchTimeInterval {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return .nanoseconds(0) }
        let (seconds, attoseconds) = left.components
        return .nanoseconds(Int(min(seconds, 86_400 * 365)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }

    // MARK: Receiving

    func next() async -> Data? {
        let site = diagnostics.willSuspend()
        defer { diagnostics.didResume(site) }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Data?, Never>) in
                var resumptions: [Resumption] = []
                let value = state.withLock { state -> Data?? in
                    let (step, actions) = state.machine.read()
                    var value: Data??
                    switch step {
                    case .takeBuffered: value = .some(take(&state))
                    case .end: value = .some(nil)
                    case .wait: state.reader = continuation
                    }
                    resumptions = run(actions, &state)
                    return value
                }
                if let value { continuation.resume(returning: value) }
                Self.resume(resumptions)
            }
        } onCancel: { [weak self] in
            self?.event { $0.readerCancelled() }
        }
    }

    private func take(_ state: inout State) -> Data {
        let value = state.buffer[state.bufferHead]
        state.bufferHead += 1
        if state.bufferHead > 64 && state.bufferHead * 2 > state.buffer.count {
            state.buffer.removeFirst(state.bufferHead)
            state.bufferHead = 0
        }
        return value
    }

    /// Reads every SDU waiting (on the socket's queue), until the socket would block or the
    /// machine pauses reading.
    private func readable() {
        guard let fd = socket.withLock({ $0?.descriptor.rawValue }) else { return }
        withUnsafeTemporaryAllocation(byteCount: receiveMTU + 1, alignment: 16) { buffer in
            guard let base = buffer.baseAddress else { return }
            while true {
                let count = recv(fd, base, buffer.count, Int32(MSG_DONTWAIT))
                // A peer that closed with our data unread in its socket leaves a reset here,
                // reported once and before what it sent: read on, up to the end.
                if count < 0 && errno == ECONNRESET && !resetSeen.exchange(true, ordering: .relaxed) { continue }
                if count > 0 || (count == 0 && !FileDescriptor.reportsHangUp(fd)) {
                    let sdu = Data(bytes: base, count: count)
                    let paused = stateEvent { state -> [Machine.Action] in
                        state.buffer.append(sdu)
                        return state.machine.received()
                    }
                    if paused { return }
                    continue
                }
                // After a reset, an empty queue is the end: a kernel L2CAP socket whose link
                // dropped reports the reset, then nothing, and no end of file.
                let reset = resetSeen.load(ordering: .relaxed)
                if count < 0 && (errno == EAGAIN || errno == EINTR) && !reset { return }
                let why: Machine.End =
                    count == 0 || reset || errno == ECONNRESET || errno == ENOTCONN
                    ? .peerClosed : .failed(String(cString: strerror(errno)))
                event { $0.ended(why) }
                return
            }
        }
    }

    /// Whether an SDU waits unread in the socket (looked at, not taken). A reset waiting to be
    /// reported comes first, and is taken: the reader then finds what follows it.
    private static func holdsUnread(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        var count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if count < 0 && errno == ECONNRESET { count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) }
        return count > 0 || (count == 0 && !FileDescriptor.reportsHangUp(fd))
    }

    // MARK: Ending

    func end(_ why: Machine.End) {
        event { $0.ended(why) }
    }

    // MARK: Running the machine

    /// Feeds one event; returns whether reading is now paused.
    @discardableResult
    private func event(_ feed: (inout Machine) -> [Machine.Action]) -> Bool {
        stateEvent { state in feed(&state.machine) }
    }

    @discardableResult
    private func stateEvent(_ feed: (inout State) -> [Machine.Action]) -> Bool {
        var paused = false
        let resumptions = state.withLock { state -> [Resumption] in
            let actions = feed(&state)
            paused = actions.contains(.pauseReading)
            return run(actions, &state)
        }
        Self.resume(resumptions)
        return paused
    }

    /// A send's first step: returns its outcome when it is already known.
    private func event(
        payload: (UInt64, Data), _ feed: (inout Machine) -> [Machine.Action], taking id: UInt64
    ) -> Result<Void, BLEError>? {
        var outcome: Result<Void, BLEError>?
        let resumptions = state.withLock { state -> [Resumption] in
            state.payloads[payload.0] = payload.1
            let resumptions = run(feed(&state.machine), &state)
            outcome = state.outcomes.removeValue(forKey: id)
            return resumptions
        }
        Self.resume(resumptions)
        return outcome
    }

    private func run(_ first: [Machine.Action], _ state: inout State) -> [Resumption] {
        var pending = first[...]
        var resumptions: [Resumption] = []
        while let action = pending.popFirst() {
            switch action {
            case .write(let id):
                pending.append(contentsOf: write(id, &state))
            case .sent(let id):
                state.payloads[id] = nil
                finish(id, .success(()), &state, &resumptions)
            case .failSend(let id, let why):
                state.payloads[id] = nil
                finish(id, .failure(error(for: why, state.machine)), &state, &resumptions)
            case .armWritable:
                socket.withLock { $0 }?.watchWritable(true)
            case .disarmWritable:
                socket.withLock { $0 }?.watchWritable(false)
            case .handOver:
                let value = take(&state)
                if let reader = state.reader.take() { resumptions.append(.reader(reader, value)) }
            case .finishReader:
                if let reader = state.reader.take() { resumptions.append(.reader(reader, nil)) }
            case .pauseReading:
                socket.withLock { $0 }?.watchReadable(false)
            case .resumeReading:
                socket.withLock { $0 }?.watchReadable(true)
            case .discardBuffered:
                state.buffer.removeAll()
                state.bufferHead = 0
            case .closeSocket:
                if let end = state.machine.end { state.endError = endError(for: end) }
                socket.withLock { socket in
                    socket?.cancel()
                    socket = nil
                }
            }
        }
        return resumptions
    }

    private func finish(
        _ id: UInt64, _ result: Result<Void, BLEError>, _ state: inout State, _ resumptions: inout [Resumption]
    ) {
        if let sender = state.senders.removeValue(forKey: id) {
            resumptions.append(.sender(sender, result))
        } else {
            state.outcomes[id] = result
        }
    }

    /// One non-blocking send of the SDU `id`; what the machine makes of its result.
    private func write(_ id: UInt64, _ state: inout State) -> [Machine.Action] {
        guard let sdu = state.payloads[id], let fd = socket.withLock({ $0?.descriptor.rawValue }) else {
            return state.machine.ended(.closedLocally)
        }
        let written = sdu.withUnsafeBytes { raw in
            Glibc.send(fd, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
        }
        if written >= 0 { return state.machine.wrote(id) }
        switch errno {
        case EAGAIN, EINTR: return state.machine.wouldBlock()
        // The peer hung up. While what it sent before waits unread, the channel reads on
        // (its sends fail); with nothing left, it ends now.
        case EPIPE, ECONNRESET:
            return Self.holdsUnread(fd) ? state.machine.peerStoppedReading() : state.machine.ended(.peerClosed)
        case ENOTCONN: return state.machine.ended(.peerClosed)
        default: return state.machine.ended(.failed(String(cString: strerror(errno))))
        }
    }

    private func error(for failure: Machine.SendFailure, _ machine: Machine) -> BLEError {
        switch failure {
        case .tooLarge(let size, let mtu):
            return BLEError(
                .invalidArguments, message: "an SDU of \(size) bytes is over the channel's send MTU of \(mtu)")
        case .cancelled: return BLEError(.cancelled, message: "the send was cancelled before it went out")
        case .timedOut:
            // What the channel was waiting on, for whoever reads the error: a peer that stopped
            // reading leaves the socket full; a stalled reader of ours shows as reading paused.
            return BLEError(
                .timeout, message: "the channel took no data before the deadline (\(machine.waitingSummary))")
        case .ended(let end): return endError(for: end)
        }
    }

    private func endError(for end: Machine.End) -> BLEError {
        switch end {
        case .closedLocally: BLEError(.cancelled, message: "the \(describe) was closed")
        case .peerClosed: BLEError(.disconnected, message: "the peer closed the \(describe)")
        case .linkLost: BLEError(.disconnected, message: "the link under the \(describe) dropped")
        case .failed(let text): BLEError(.failed, message: "the \(describe) failed: \(text)")
        }
    }

    private static func resume(_ resumptions: [Resumption]) {
        for resumption in resumptions {
            switch resumption {
            case .sender(let continuation, let result): continuation.resume(returning: result)
            case .reader(let continuation, let value): continuation.resume(returning: value)
            }
        }
    }
}
