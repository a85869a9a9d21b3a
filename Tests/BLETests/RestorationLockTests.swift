import Foundation
import Glibc
import Testing

@testable import BLE

/// The restore identifier's lock (``RestorationStore``): one central at a time, in this process
/// or another, and free again as soon as its holder lets it go.
@Suite("State restoration lock")
struct RestorationLockTests {
    /// A fresh directory, removed after `body`.
    static func withDirectory(_ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swift-ble-lock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    @Test("a second holder in this process is refused, also through another spelling of the directory")
    func oneHolderPerProcess() throws {
        try Self.withDirectory { directory in
            let link = directory.appendingPathComponent("same-place")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: directory)
            let first = try RestorationStore(identifier: "gateway", directory: directory)
            for spelling in [directory, link] {
                let error = #expect(throws: BLEError.self) {
                    try RestorationStore(identifier: "gateway", directory: spelling)
                }
                #expect(error?.code == .inProgress)
            }
            let other = try RestorationStore(identifier: "other", directory: directory)
            other.release()
            first.release()
            let again = try RestorationStore(identifier: "gateway", directory: link)
            again.release()
        }
    }

    /// A child process holds a copy of every descriptor of its parent until it execs or exits;
    /// a lock that belonged to the open file (`flock`) stayed held by such a child after the
    /// central let it go. This child never execs (it sleeps until killed), so it holds its
    /// copies for the whole test.
    @Test("a child process started while the lock was held does not keep it once released")
    func childProcessDoesNotKeepIt() throws {
        try Self.withDirectory { directory in
            let first = try RestorationStore(identifier: "gateway", directory: directory)
            let child = fork()
            if child == 0 {
                // Only async-signal-safe calls in the child of a threaded process.
                sleep(60)
                _exit(0)
            }
            #expect(child > 0)
            defer {
                kill(child, SIGKILL)
                var status: Int32 = 0
                waitpid(child, &status, 0)
            }
            first.release()
            let again = try RestorationStore(identifier: "gateway", directory: directory)
            again.release()
        }
    }
}
