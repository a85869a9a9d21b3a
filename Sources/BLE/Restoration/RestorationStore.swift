import DBus
import Foundation
import Glibc

/// The state file of one restore identifier, and the lock that makes it one process's at a time.
///
/// `<directory>/<identifier>.json` holds the record; `<identifier>.lock` is held for as long as
/// the central lives, so a second process (or a second central in this one) with the same
/// identifier is refused rather than writing over the first one's state. The kernel drops the
/// lock when the process ends, however it ends, so a killed process does not leave it behind.
/// Writes go to a temporary file that is synced and renamed over the state file: a crash
/// mid-write leaves the old state or the new, never half of one.
///
/// The lock is a POSIX record lock (`fcntl(F_SETLK)`), which belongs to the process, with a
/// table of the paths this process holds for the centrals within it. An `flock` belongs to the
/// open file instead, and every child process spawned while it was held (by any thread, until
/// that child's `exec` closes the descriptor) shares it: a central closed while some other
/// part of the app started a process kept its identifier locked for a moment, and a central
/// opened at once with it was refused.
final class RestorationStore: Sendable {
    let identifier: String
    let directory: URL
    /// The locked file's descriptor; -1 once released.
    private let lock: PosixMutex<Int32>
    private let lockPath: String
    /// The lock files held by this process's centrals: a record lock does not keep a second
    /// one in the same process out.
    private static let heldHere = PosixMutex<Set<String>>([])

    var stateFile: URL { directory.appendingPathComponent("\(identifier).json") }

    /// Takes the identifier's lock in `directory` (created if missing; the default when nil).
    init(identifier: String, directory: URL?) throws(BLEError) {
        try Self.validate(identifier)
        self.identifier = identifier
        self.directory = directory ?? Self.defaultDirectory()
        do {
            try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        } catch {
            throw BLEError(
                .failed, message: "cannot create the restoration directory \(self.directory.path): \(error)")
        }
        // Spelt one way, whatever the caller's: the table below tells paths apart by their text.
        let lockPath = self.directory.resolvingSymlinksInPath().appendingPathComponent("\(identifier).lock").path
        let inUse = BLEError(
            .inProgress,
            message: "the restore identifier '\(identifier)' is in use by another central (\(lockPath) is locked)")
        guard Self.heldHere.withLock({ $0.insert(lockPath).inserted }) else { throw inUse }
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason = errno
            Self.heldHere.withLock { _ = $0.remove(lockPath) }
            throw BLEError(.failed, message: "cannot open \(lockPath): \(String(cString: strerror(reason)))")
        }
        var whole = Glibc.flock()
        whole.l_type = Int16(F_WRLCK)
        whole.l_whence = Int16(SEEK_SET)
        guard fcntl(descriptor, F_SETLK, &whole) == 0 else {
            let reason = errno
            close(descriptor)
            Self.heldHere.withLock { _ = $0.remove(lockPath) }
            if reason == EACCES || reason == EAGAIN { throw inUse }
            throw BLEError(.failed, message: "cannot lock \(lockPath): \(String(cString: strerror(reason)))")
        }
        self.lockPath = lockPath
        lock = PosixMutex(descriptor)
    }

    deinit { release() }

    /// Lets another central take the identifier (closing the file drops the lock). The record
    /// lock goes with the first close of any descriptor of the file in this process: nothing
    /// else here opens it, since a second central is refused by the table before it opens.
    func release() {
        let released = lock.withLock { descriptor -> Bool in
            guard descriptor >= 0 else { return false }
            close(descriptor)
            descriptor = -1
            return true
        }
        if released { Self.heldHere.withLock { _ = $0.remove(lockPath) } }
    }

    /// `$XDG_STATE_HOME/swift-ble`, else `~/.local/state/swift-ble`.
    static func defaultDirectory() -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return URL(fileURLWithPath: state).appendingPathComponent("swift-ble")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".local/state/swift-ble")
    }

    /// An identifier names files: letters, digits, `.`, `_` and `-`, not starting with a dot.
    static func validate(_ identifier: String) throws(BLEError) {
        let allowed = identifier.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard allowed, !identifier.isEmpty, identifier.utf8.count <= 100, !identifier.hasPrefix(".") else {
            throw BLEError(
                .invalidArguments,
                message: "a restore identifier is 1 to 100 letters, digits, '.', '_' or '-', not starting with '.'")
        }
    }

    /// What the previous process kept: nil when there is no file. A file that does not decode,
    /// or is not ours for this identifier, is renamed aside (`<identifier>.json.damaged-<time>`)
    /// and reported in `setAside`: never fatal, and never read again.
    func load() -> (record: RestorationRecord?, setAside: String?) {
        guard let data = FileManager.default.contents(atPath: stateFile.path) else { return (nil, nil) }
        if let record = try? JSONDecoder().decode(RestorationRecord.self, from: data), record.isUsable(for: identifier)
        {
            return (record, nil)
        }
        let aside = stateFile.path + ".damaged-\(Int(Date().timeIntervalSince1970))"
        rename(stateFile.path, aside)
        return (nil, aside)
    }

    /// Replaces the state file with `record`, atomically.
    func save(_ record: RestorationRecord) throws(BLEError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do { data = try encoder.encode(record) } catch {
            throw BLEError(.failed, message: "encoding the state: \(error)")
        }
        let temporary = stateFile.path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.failure("cannot write \(temporary)") }
        let written = data.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return true }
            var offset = 0
            while offset < bytes.count {
                let count = write(descriptor, base + offset, bytes.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        let synced = written && fsync(descriptor) == 0
        close(descriptor)
        guard synced, rename(temporary, stateFile.path) == 0 else {
            let error = Self.failure("cannot write \(stateFile.path)")
            unlink(temporary)
            throw error
        }
    }

    private static func failure(_ what: String) -> BLEError {
        BLEError(.failed, message: "\(what): \(String(cString: strerror(errno)))")
    }
}
