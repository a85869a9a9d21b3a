import DBus
import Foundation
import Glibc
import Synchronization

/// What a datagram costs the thread that receives it, in Swift, layer by layer, with none of
/// swift-ble's code: the least that an AcquireNotify value delivered as `Data` to a `for await`
/// loop can cost on this machine and toolchain (`make bench-datagram-floor`, README).
///
/// An in-process sender writes 20-byte datagrams on a `SOCK_SEQPACKET` pair at a fixed
/// interval; the receiving thread's CPU (`RUSAGE_THREAD`) is divided by the values it took.
/// - `blocking`: `poll`, then `recv` until the socket is empty (the C floor's loop, in Swift);
/// - `callback`: the same loop, each datagram made a `Data` and handed to a closure;
/// - `async`: each `Data` handed to a `for await` loop in a task that prefers the receiving
///   thread's executor (swift-ble's recommended set-up), through a one-lock buffer whose wait
///   registers a cancellation handler, as every correct `AsyncIteratorProtocol` must;
/// - `async-uncancellable`: the same without the handler, to price it (not a correct iterator:
///   a cancelled consumer would wait forever).
enum DatagramFloor {
    enum Mode: String, CaseIterable {
        case blocking, callback, async
        case asyncUncancellable = "async-uncancellable"
    }

    static func run(mode: Mode, count: Int, intervalMicroseconds: Int) -> String {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0 else {
            return #"{"error":"socketpair failed"}"#
        }
        let tally = PosixMutex((received: 0, checksum: 0))
        let receiver = DatagramReceiver(socket: pair[0], blockingCount: count) { value in
            tally.withLock { tally in
                tally.received += 1
                tally.checksum &+= Int(value[value.startIndex])
                return tally.received == count
            }
        }
        receiver.start(mode: mode)
        let output = pair[1]
        let sender = Thread { send(on: output, count: count, intervalMicroseconds: intervalMicroseconds) }
        sender.start()
        let cpu = receiver.finished.wait()
        close(pair[0])
        close(pair[1])
        let checksum = mode == .blocking ? receiver.blockingChecksum : tally.withLock { $0.checksum }
        return String(
            format: #"{"impl":"swift-runtime","case":"%@","n":%d,"cpu_us_per_op":%.3f,"checksum":%d}"#,
            mode.rawValue, count, cpu / Double(count), checksum)
    }

    /// One 20-byte datagram every `intervalMicroseconds`, on absolute deadlines (no drift).
    private static func send(on socket: Int32, count: Int, intervalMicroseconds: Int) {
        var next = timespec()
        clock_gettime(CLOCK_MONOTONIC, &next)
        var datagram = [UInt8](repeating: 0x5A, count: 20)
        for index in 0..<count {
            next.tv_nsec += intervalMicroseconds * 1_000
            while next.tv_nsec >= 1_000_000_000 {
                next.tv_nsec -= 1_000_000_000
                next.tv_sec += 1
            }
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nil)
            datagram[0] = UInt8(truncatingIfNeeded: index)
            _ = Glibc.send(socket, &datagram, datagram.count, 0)
        }
    }
}

/// The receiving thread: a poll loop over the socket and a wake-up pipe, and the executor
/// whose jobs it runs between polls. It reads the socket pair of ``DatagramFloor`` and, in
/// `ble-bench gatt notify callback|async`, ble-sim's AcquireNotify socket. Its mutable state is the loop thread's alone (the consumer
/// task runs there too); `finished` orders what it leaves for other threads.
final class DatagramReceiver: TaskExecutor, @unchecked Sendable {
    /// The receiving thread's CPU time over its loop, in microseconds.
    let finished = OneShot<Double>()
    /// `blocking` reads bytes, not values: how many it reads and the sum of their first bytes.
    private let blockingCount: Int
    private(set) var blockingChecksum = 0
    private let socket: Int32
    /// The consumer of each value; true once it wants no more.
    private let take: @Sendable (Data) -> Bool
    private var done = false
    private let stopRequested = StopRequest()
    private let jobs = PosixMutex<[UnownedJob]>([])
    private let wakePipe: (read: Int32, write: Int32)
    private let buffer = FloorBuffer()
    private var loopThread: pthread_t?

    init(socket: Int32, blockingCount: Int = 0, take: @escaping @Sendable (Data) -> Bool) {
        self.socket = socket
        self.blockingCount = blockingCount
        self.take = take
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        wakePipe = (fds[0], fds[1])
        _ = fcntl(wakePipe.read, F_SETFL, O_NONBLOCK)
    }

    deinit {
        close(wakePipe.read)
        close(wakePipe.write)
    }

    func start(mode: DatagramFloor.Mode) {
        let ready = OneShot<Bool>()
        Thread { [self] in
            loopThread = pthread_self()
            ready.set(true)
            let start = threadMicroseconds()
            switch mode {
            case .blocking: runBlocking()
            case .callback: runLoop { [self] value in done = take(value) }
            case .async, .asyncUncancellable: runLoop { [buffer] value in buffer.yield(value) }
            }
            finished.set(threadMicroseconds() - start)
        }.start()
        _ = ready.wait()
        guard mode == .async || mode == .asyncUncancellable else { return }
        let values = FloorValues(buffer: buffer, cancellable: mode == .async)
        Task(executorPreference: self) { [self] in
            for await value in values where take(value) {
                done = true
                break
            }
        }
    }

    /// Ends the loop within a tenth of a second (its poll's timeout), values or not.
    func stop() { stopRequested.set() }

    private func runBlocking() {
        var datagram = [UInt8](repeating: 0, count: 4_096)
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        var received = 0
        while received < blockingCount && !stopRequested.isSet {
            _ = poll(&descriptor, 1, 100)
            while true {
                let length = recv(socket, &datagram, datagram.count, Int32(MSG_DONTWAIT))
                if length <= 0 { break }
                received += 1
                blockingChecksum &+= Int(datagram[0])
            }
        }
    }

    private func runLoop(_ deliver: (Data) -> Void) {
        // Locals, not properties: a class's stored `var` is checked for exclusive access at run
        // time on every use, which the loop would pay per value.
        var running: [UnownedJob] = []
        var datagram = [UInt8](repeating: 0, count: 4_096)
        var descriptors = [
            pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0),
        ]
        drainJobs(&running)
        while !done && !stopRequested.isSet {
            _ = poll(&descriptors, 2, 100)
            if descriptors[1].revents != 0 {
                var drained: UInt8 = 0
                while read(wakePipe.read, &drained, 1) > 0 {}
            }
            datagram.withUnsafeMutableBytes { bytes in
                guard let base = bytes.baseAddress else { return }
                while true {
                    let length = recv(socket, base, bytes.count, Int32(MSG_DONTWAIT))
                    if length <= 0 { break }
                    deliver(Data(bytes: base, count: length))
                }
            }
            drainJobs(&running)
        }
        // A consumer still waiting (stopped before its last value) ends with the buffer.
        buffer.terminate()
        drainJobs(&running)
    }

    /// Runs the queued jobs, swapped into `running` (kept by the caller, so its storage is reused).
    private func drainJobs(_ running: inout [UnownedJob]) {
        jobs.withLock { swap(&$0, &running) }
        for job in running { job.runSynchronously(on: asUnownedTaskExecutor()) }
        running.removeAll(keepingCapacity: true)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        if let loopThread, pthread_equal(loopThread, pthread_self()) != 0 { return }
        var one: UInt8 = 1
        _ = write(wakePipe.write, &one, 1)
    }

    private func threadMicroseconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD, which Glibc's module leaves out
        let user = Double(usage.ru_utime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec)
        return user + Double(usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_stime.tv_usec)
    }
}

/// A flag one thread sets and another polls: an atomic load per turn, no lock.
private final class StopRequest: Sendable {
    private let flag = Atomic(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) }
}

/// Values from the receiving thread to one waiting consumer: one lock, one continuation.
private final class FloorBuffer: Sendable {
    private struct State {
        var values: [Data] = []
        var head = 0
        var waiter: UnsafeContinuation<Data?, Never>?
        var ended = false

        mutating func popFirst() -> Data? {
            guard head < values.count else { return nil }
            defer {
                head += 1
                if head == values.count {
                    values.removeAll(keepingCapacity: true)
                    head = 0
                }
            }
            return values[head]
        }
    }

    private let state = PosixMutex(State())

    func yield(_ value: Data) {
        let waiter = state.withLock { state -> UnsafeContinuation<Data?, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.values.append(value)
            return nil
        }
        waiter?.resume(returning: value)
    }

    func terminate() {
        let waiter = state.withLock { state -> UnsafeContinuation<Data?, Never>? in
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    nonisolated(nonsending) func next(cancellable: Bool) async -> Data? {
        let ready = state.withLock { state -> Data?? in
            if let value = state.popFirst() { return .some(value) }
            return state.ended ? .some(nil) : nil
        }
        if let ready { return ready }
        guard cancellable else { return await withUnsafeContinuation { park($0) } }
        return await _unsafeInheritExecutor_withTaskCancellationHandler {
            await withUnsafeContinuation { park($0) }
        } onCancel: {
            terminate()
        }
    }

    private func park(_ waiter: UnsafeContinuation<Data?, Never>) {
        let now = state.withLock { state -> Data?? in
            if let value = state.popFirst() { return .some(value) }
            if state.ended { return .some(nil) }
            state.waiter = waiter
            return nil
        }
        if let now { waiter.resume(returning: now) }
    }
}

private struct FloorValues: AsyncSequence, Sendable {
    let buffer: FloorBuffer
    let cancellable: Bool

    struct AsyncIterator: AsyncIteratorProtocol {
        let buffer: FloorBuffer
        let cancellable: Bool

        mutating func next() async -> Data? { await buffer.next(cancellable: cancellable) }

        nonisolated(nonsending) mutating func next(isolation actor: (any Actor)?) async -> Data? {
            await buffer.next(cancellable: cancellable)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(buffer: buffer, cancellable: cancellable) }
}

/// A value set once by one thread and waited for by another.
final class OneShot<Value: Sendable>: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let value = PosixMutex<Value?>(nil)

    func set(_ value: Value) {
        self.value.withLock { $0 = value }
        semaphore.signal()
    }

    func wait() -> Value {
        while true {
            semaphore.wait()
            if let value = value.withLock({ $0 }) { return value }
        }
    }
}
