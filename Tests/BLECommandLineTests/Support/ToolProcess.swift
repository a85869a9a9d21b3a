import DBus
import Foundation
import Glibc
import Testing

/// The built `ble` binary run as a user would: arguments, environment, standard output and
/// error on pipes (or both on a pseudo-terminal), signals, exit status.
///
/// Spawned with `posix_spawn` rather than Foundation's `Process` (see TestBus for why): no
/// inherited descriptors, no blocked signals. Blocking reads and `waitpid` run on threads of
/// their own, never on the cooperative pool.
final class ToolProcess: Sendable {
    struct Outcome: Sendable {
        var status: Int32
        var output: String
        var errors: String
    }

    private struct State {
        var output: [UInt8] = []
        var errors: [UInt8] = []
        var status: Int32?
        var openStreams = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// Counts changes, so a waiter that looked before a change does not sleep through it.
        var version = 0

        mutating func takeWaiters() -> [CheckedContinuation<Void, Never>] {
            version += 1
            defer { waiters.removeAll() }
            return waiters
        }
    }

    let processID: Int32
    private let state = PosixMutex(State())

    /// The `ble` binary next to the test bundle (`swift build --build-tests` builds both), or `$BLE_TOOL`.
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["BLE_TOOL"] { return path }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("ble").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/ble").path
    }

    /// Starts `ble arguments…`. With `terminal`, standard input, output and error are one
    /// pseudo-terminal of `columns` × `rows`, so the tool sees a TTY.
    init(
        _ arguments: [String], environment: [String: String] = [:], terminal: Bool = false, columns: UInt16 = 120,
        rows: UInt16 = 40, program: String = ToolProcess.binary
    ) throws {
        var inherited = ProcessInfo.processInfo.environment
        inherited["NO_COLOR"] = nil
        inherited["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=/nonexistent/swift-ble-test-guard"
        for (key, value) in environment { inherited[key] = value }
        let environmentStrings = inherited.map { "\($0.key)=\($0.value)" }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var readEnds: [Int32] = []
        var childEnds: [Int32] = []
        if terminal {
            var master: Int32 = -1
            var slave: Int32 = -1
            var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
            guard openpty(&master, &slave, nil, nil, &size) == 0 else { throw ToolProcessError.spawnFailed(errno) }
            _ = fcntl(master, F_SETFD, FD_CLOEXEC)
            _ = fcntl(slave, F_SETFD, FD_CLOEXEC)
            for target in Int32(0)...2 { posix_spawn_file_actions_adddup2(&actions, slave, target) }
            readEnds = [master]
            childEnds = [slave]
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            for target in Int32(1)...2 {
                var pipeEnds: [Int32] = [-1, -1]
                guard pipe(&pipeEnds) == 0 else { throw ToolProcessError.spawnFailed(errno) }
                for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], target)
                readEnds.append(pipeEnds[0])
                childEnds.append(pipeEnds[1])
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        let envp = environmentStrings.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var processID: Int32 = 0
        let result = posix_spawn(&processID, program, &actions, &attributes, argv, envp)
        for descriptor in childEnds { close(descriptor) }
        guard result == 0 else {
            for descriptor in readEnds { close(descriptor) }
            throw ToolProcessError.spawnFailed(result)
        }
        self.processID = processID
        state.withLock { $0.openStreams = readEnds.count }
        for (index, descriptor) in readEnds.enumerated() {
            let isErrors = index == 1
            Thread.detachNewThread { [self] in drain(descriptor, errors: isErrors) }
        }
        Thread.detachNewThread { [self] in reap() }
    }

    deinit {
        if state.withLock({ $0.status == nil }) { kill(processID, SIGKILL) }
    }

    private func drain(_ descriptor: Int32, errors: Bool) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            let waiters = state.withLock { state in
                if errors { state.errors += buffer[0..<count] } else { state.output += buffer[0..<count] }
                return state.takeWaiters()
            }
            for waiter in waiters { waiter.resume() }
        }
        close(descriptor)
        let waiters = state.withLock { state in
            state.openStreams -= 1
            return state.takeWaiters()
        }
        for waiter in waiters { waiter.resume() }
    }

    private func reap() {
        var status: Int32 = 0
        while waitpid(processID, &status, 0) == -1 && errno == EINTR {}
        let code = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let waiters = state.withLock { state in
            state.status = code
            return state.takeWaiters()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Standard output so far (everything the terminal showed, with `terminal`).
    var output: String { state.withLock { String(decoding: $0.output, as: UTF8.self) } }

    /// Standard error so far.
    var errors: String { state.withLock { String(decoding: $0.errors, as: UTF8.self) } }

    /// Sends a signal (SIGINT is Ctrl-C).
    func send(_ signal: Int32) { kill(processID, signal) }

    /// Waits until `condition` holds for (output, errors), or fails after `timeout`.
    func waitUntil(
        within timeout: Duration = .seconds(20), _ what: String,
        _ condition: @escaping @Sendable (String, String) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (done, finished, version) = state.withLock { state in
                (
                    condition(
                        String(decoding: state.output, as: UTF8.self), String(decoding: state.errors, as: UTF8.self)),
                    state.status != nil && state.openStreams == 0, state.version
                )
            }
            if done { return }
            if finished || ContinuousClock.now >= deadline {
                Issue.record("\(what) did not happen; output: \(output)\nerrors: \(errors)")
                throw ToolProcessError.timedOut
            }
            await waitForChange(since: version, until: deadline)
        }
    }

    /// Waits for the exit and the end of its output (killing it after `timeout`).
    func finish(within timeout: Duration = .seconds(60)) async throws -> Outcome {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (outcome, version) = state.withLock { state -> (Outcome?, Int) in
                guard let status = state.status, state.openStreams == 0 else { return (nil, state.version) }
                let outcome = Outcome(
                    status: status, output: String(decoding: state.output, as: UTF8.self),
                    errors: String(decoding: state.errors, as: UTF8.self))
                return (outcome, state.version)
            }
            if let outcome { return outcome }
            if ContinuousClock.now >= deadline {
                kill(processID, SIGKILL)
                Issue.record("ble \(processID) did not exit within \(timeout); output: \(output)\nerrors: \(errors)")
                throw ToolProcessError.timedOut
            }
            await waitForChange(since: version, until: deadline)
        }
    }

    /// Suspends until more output, the exit, or the deadline.
    private func waitForChange(since version: Int, until deadline: ContinuousClock.Instant) async {
        let timer = Task { [self] in
            try? await Task.sleep(until: deadline)
            let waiters = state.withLock { $0.takeWaiters() }
            for waiter in waiters { waiter.resume() }
        }
        await withCheckedContinuation { continuation in
            let changed = state.withLock { state in
                if state.version != version { return true }
                state.waiters.append(continuation)
                return false
            }
            if changed { continuation.resume() }
        }
        timer.cancel()
    }

    /// Runs `ble arguments…` to the end.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], within timeout: Duration = .seconds(60)
    ) async throws -> Outcome {
        try await ToolProcess(arguments, environment: environment).finish(within: timeout)
    }
}

/// Why a tool process could not be run or waited for.
enum ToolProcessError: Error {
    case spawnFailed(Int32)
    case timedOut
}
