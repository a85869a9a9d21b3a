import DBus
import Foundation
import Glibc

/// A private `dbus-daemon` for tests and for the simulator: started on a temporary Unix
/// socket with the system bus's limits, stopped by ``stop()``, by ``withTestBus(_:)`` on every
/// exit path, or when the object goes away.
///
/// The daemon is spawned and reaped here rather than through Foundation's `Process`, which
/// is unsafe for this in a test process: it notices an exit when a socket the child inherited
/// closes, but children spawned at that moment by other tests inherit the socket too, so
/// buses stopping concurrently waited on each other while holding every thread of the
/// cooperative pool; it reads `/proc/self/fd` past the end of its entries and crashes when
/// many descriptors are open; and its children inherit the signal mask of the spawning
/// thread, which in a Swift concurrency thread blocks SIGTERM.
public final class TestBus: Sendable {
    /// The address to connect to, e.g. `unix:path=/tmp/swift-ble-bus-…/socket,guid=…` (after
    /// ``restart()``, the new daemon's: the same socket, another GUID).
    public var address: String { daemon.withLock { $0.address } }
    /// The daemon's process id (the latest one's, after ``restart()``).
    public var processID: Int32 { daemon.withLock { $0.processID } }
    /// The daemon now, and whether the bus is still to be stopped.
    private let daemon: PosixMutex<(processID: Int32, address: String, up: Bool, running: Bool)>
    private let directory: URL
    private let arguments: [String]

    /// Starts a daemon with `limits` and `policy`; throws if `dbus-daemon` is missing or does
    /// not come up.
    public init(limits: BusLimits = .systemBus, policy: BusPolicy = .allowAll) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swift-ble-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("bus.conf")
        do {
            try limits.configuration(socket: directory.appendingPathComponent("socket").path, policy: policy)
                .write(to: config, atomically: true, encoding: .utf8)
            let arguments = ["--config-file=\(config.path)", "--nofork", "--print-address=1", "--nopidfile"]
            let (processID, line) = try Self.start(arguments)
            self.daemon = PosixMutex((processID, line, true, true))
            self.arguments = arguments
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        self.directory = directory
    }

    private static func start(_ arguments: [String]) throws -> (Int32, String) {
        let (processID, line) = try spawn(try daemonPath(), arguments)
        guard let line, line.hasPrefix("unix:") else {
            kill(processID)
            throw TestBusError.daemonDidNotStart
        }
        return (processID, line)
    }

    /// Kills the daemon but keeps its files, so that ``restart()`` brings the bus back at the
    /// same socket: every client sees the bus go away, as when the system's dbus-daemon dies.
    public func crash() {
        let processID = daemon.withLock { daemon -> Int32? in
            guard daemon.up else { return nil }
            daemon.up = false
            return daemon.processID
        }
        if let processID { Self.kill(processID) }
    }

    /// Starts a new daemon on the same socket after ``crash()`` (a new GUID: the address's
    /// `guid=` no longer matches, as for a restarted system bus).
    public func restart() throws {
        guard daemon.withLock({ $0.running && !$0.up }) else { return }
        let (processID, address) = try Self.start(arguments)
        daemon.withLock { daemon in
            daemon.processID = processID
            daemon.address = address
            daemon.up = true
        }
    }

    deinit { stop() }

    /// Stops the daemon (every client sees the bus go away) and removes its files. Idempotent.
    public func stop() {
        let (wasRunning, processID) = daemon.withLock { daemon -> (Bool, Int32?) in
            defer {
                daemon.running = false
                daemon.up = false
            }
            return (daemon.running, daemon.up ? daemon.processID : nil)
        }
        guard wasRunning else { return }
        if let processID { Self.kill(processID) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// A new connection to this bus.
    public func connect(options: ConnectionOptions = ConnectionOptions()) async throws(DBusError) -> Connection {
        try await Connection(bus: .address(address), options: options)
    }

    /// Kills the daemon (SIGKILL: nothing of it needs saving) and reaps it.
    private static func kill(_ processID: Int32) {
        _ = Glibc.kill(processID, SIGKILL)
        var status: Int32 = 0
        while waitpid(processID, &status, 0) == -1 && errno == EINTR {}
    }

    /// Starts `path` with its standard output on a socket, no other inherited descriptors
    /// and no blocked signals, and returns its process id and the first line it prints (`nil`
    /// if it exits first).
    private static func spawn(_ path: String, _ arguments: [String]) throws -> (Int32, String?) {
        var output: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &output) == 0 else {
            throw TestBusError.daemonDidNotStart
        }
        defer {
            Glibc.close(output[0])
            Glibc.close(output[1])
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Descriptors other threads opened without close-on-exec stay out of the daemon too.
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
            _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var processID: Int32 = 0
        let result = posix_spawn(&processID, path, &actions, &attributes, argv, environ)
        guard result == 0 else { throw TestBusError.daemonDidNotStart }
        Glibc.close(output[1])
        output[1] = -1
        return (processID, firstLine(of: output[0]))
    }

    private static func daemonPath() throws -> String {
        for candidate in ["/usr/bin/dbus-daemon", "/bin/dbus-daemon", "/usr/local/bin/dbus-daemon"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw TestBusError.daemonNotInstalled
    }

    /// Reads until the first newline or end of file.
    private static func firstLine(of descriptor: Int32) -> String? {
        var collected: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while !collected.contains(UInt8(ascii: "\n")) {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            collected += buffer[0..<count]
        }
        guard let text = String(validating: collected, as: UTF8.self) else { return nil }
        return text.split(separator: "\n").first.map { String($0).trimmingCharacters(in: .whitespaces) }
    }
}

/// Why a ``TestBus`` could not start.
public enum TestBusError: Error, Sendable {
    /// `dbus-daemon` is not installed (Debian: `apt-get install dbus`).
    case daemonNotInstalled
    /// The daemon exited or printed no address.
    case daemonDidNotStart
}

/// Runs `body` with a fresh private bus and stops the bus afterwards, whether `body` returns
/// or throws.
public func withTestBus<Result>(
    limits: BusLimits = .systemBus, _ body: (TestBus) async throws -> Result
) async throws -> Result {
    let bus = try TestBus(limits: limits)
    defer { bus.stop() }
    return try await body(bus)
}
