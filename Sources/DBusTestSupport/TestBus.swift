import DBus
import Foundation
import Synchronization

/// A private `dbus-daemon` for tests and for the simulator: started on a temporary Unix
/// socket with the system bus's limits, stopped by ``stop()``, by ``withTestBus(_:)`` on every
/// exit path, or when the object goes away.
public final class TestBus: Sendable {
    /// The address to connect to, e.g. `unix:path=/tmp/swift-ble-bus-…/socket,guid=…`.
    public let address: String
    /// The daemon's process id.
    public let processID: Int32
    private let process: Mutex<Process?>
    private let directory: URL

    /// Starts a daemon; throws if `dbus-daemon` is missing or does not come up.
    public init(limits: BusLimits = .systemBus) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swift-ble-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("bus.conf")
        try limits.configuration(socket: directory.appendingPathComponent("socket").path)
            .write(to: config, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.daemonPath())
        process.arguments = ["--config-file=\(config.path)", "--nofork", "--print-address=1", "--nopidfile"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        guard let line = Self.firstLine(of: output.fileHandleForReading), line.hasPrefix("unix:") else {
            Self.kill(process)
            try? FileManager.default.removeItem(at: directory)
            throw TestBusError.daemonDidNotStart
        }
        self.address = line
        self.processID = process.processIdentifier
        self.process = Mutex(process)
        self.directory = directory
    }

    deinit { stop() }

    /// Stops the daemon (every client sees the bus go away) and removes its files. Idempotent.
    public func stop() {
        guard let process = process.withLock({ $0.take() }) else { return }
        if process.isRunning {
            Self.kill(process)
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// A new connection to this bus.
    public func connect(options: ConnectionOptions = ConnectionOptions()) async throws(DBusError) -> Connection {
        try await Connection(bus: .address(address), options: options)
    }

    /// Kills the daemon and reaps it.
    ///
    /// SIGKILL rather than `terminate()`'s SIGTERM: a daemon started from a thread that blocks
    /// signals (every Swift concurrency and Dispatch worker thread does) inherits that mask and
    /// never sees SIGTERM. `waitpid` rather than `waitUntilExit()`: Foundation notices an exit
    /// when a socket the child inherited closes, but a daemon spawned at that moment from
    /// another thread inherits the socket too and keeps it open, so tests stopping their buses
    /// could wait on each other, spinning, until they hold every thread of the cooperative pool.
    private static func kill(_ process: Process) {
        let processID = process.processIdentifier
        _ = Foundation.kill(processID, SIGKILL)
        var status: Int32 = 0
        // ECHILD means Foundation's own watcher reaped it first, which is just as good.
        while waitpid(processID, &status, 0) == -1 && errno == EINTR {}
    }

    private static func daemonPath() throws -> String {
        for candidate in ["/usr/bin/dbus-daemon", "/bin/dbus-daemon", "/usr/local/bin/dbus-daemon"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw TestBusError.daemonNotInstalled
    }

    private static func firstLine(of handle: FileHandle) -> String? {
        var collected = Data()
        while !collected.contains(UInt8(ascii: "\n")) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            collected.append(chunk)
        }
        guard let text = String(data: collected, encoding: .utf8) else { return nil }
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
