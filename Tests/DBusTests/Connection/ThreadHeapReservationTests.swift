import Foundation
import Glibc
import Testing

@testable import DBus

/// The I/O thread's heap is made accessible once, up front, and none of it stays resident:
/// read from the kernel's map of the process (`/proc/self/smaps`), the mapping that holds a
/// block the thread allocates.
@Suite struct ThreadHeapReservationTests {
    /// One mapping of the process: its size, protection and resident bytes.
    struct Mapping {
        var size: Int
        var permissions: Substring
        var residentBytes: Int
    }

    @Test("a thread that reserved has its heap accessible up to the reservation, with little of it resident")
    func reservedThread() async throws {
        let bytes = 24 << 20
        let mapping = await onNewThread {
            ThreadHeapReservation.reserve(bytes)
            return Self.mappingOfABlock()
        }
        let found = try #require(mapping)
        #expect(found.permissions.hasPrefix("rw"))
        #expect(found.size >= bytes)
        #expect(found.residentBytes < bytes / 2)
    }

    @Test("a connection's I/O thread reserves its heap before it allocates")
    func ioThreadReserves() async throws {
        try await withConnections(1) { _, connections in
            let executor = connections[0].executor
            let mapping = await withTaskExecutorPreference(executor) {
                executor.isCurrent ? Self.mappingOfABlock() : nil
            }
            let found = try #require(mapping)
            #expect(found.permissions.hasPrefix("rw"))
            #expect(found.size >= ThreadHeapReservation.ioThreadBytes)
            #expect(found.residentBytes < ThreadHeapReservation.ioThreadBytes / 2)
        }
    }

    /// Runs `body` on a thread of its own, which glibc gives an arena of its own (up to its
    /// limit of arenas, past which threads share them).
    private func onNewThread(_ body: @escaping @Sendable () -> Mapping?) async -> Mapping? {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    /// The mapping holding a block the calling thread allocates: 4 KiB, above the sizes glibc
    /// keeps per thread (a block another thread's arena made and this thread freed could come
    /// back for a small request), below those it maps on their own.
    private static func mappingOfABlock() -> Mapping? {
        guard let block = malloc(4096) else { return nil }
        defer { free(block) }
        return mapping(containing: UInt(bitPattern: block))
    }

    /// The mapping that holds `address`, read from `/proc/self/smaps`.
    private static func mapping(containing address: UInt) -> Mapping? {
        // Read to its end: the kernel reports the file's size as zero.
        guard let file = FileHandle(forReadingAtPath: "/proc/self/smaps"),
            let data = try? file.readToEnd(), let text = String(data: data, encoding: .utf8)
        else { return nil }
        var found: Mapping?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, range.contains("-"), fields.count >= 2 {
                if found != nil { break }
                let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                if bounds.count == 2, bounds[0] <= address, address < bounds[1] {
                    found = Mapping(size: Int(bounds[1] - bounds[0]), permissions: fields[1], residentBytes: 0)
                }
            } else if found != nil, fields.first == "Rss:", fields.count >= 2, let kilobytes = Int(fields[1]) {
                found?.residentBytes = kilobytes << 10
            }
        }
        return found
    }
}
