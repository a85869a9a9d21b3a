import Foundation
import Glibc
import Testing

@testable import DBus

/// Whether a sanitizer's runtime is in the process: it brings its own `malloc` (`make sanitize`).
private let sanitizerAllocates = ["__tsan_init", "__asan_init"].contains { (symbol: String) in
    dlsym(nil, symbol) != nil
}

/// The I/O thread's heap is made accessible once, up front, and none of it stays resident:
/// read from the kernel's map of the process (`/proc/self/smaps`), the mapping that holds a
/// block the thread allocates.
///
/// glibc gives a new thread an arena of its own only while it has fewer than its limit (eight
/// per core); past it, as in a test process running many connections at once, threads share
/// arenas, the main one among them. The main arena's heap grows with `brk`, by glibc's padding
/// rather than a page at a time, and gives back what is freed at its end: nothing is reserved
/// there, and nothing needs to be. The checks below are those of a heap of a thread's arena.
///
/// Under ThreadSanitizer or AddressSanitizer the sanitizer's allocator replaces glibc's: there
/// are no arenas to reserve, and a block sits in the sanitizer's own regions, so these checks
/// do not apply there.
@Suite(.enabled(if: !sanitizerAllocates, "a sanitizer's allocator replaces glibc's arenas"))
struct ThreadHeapReservationTests {
    /// One mapping of the process: its size, protection, resident bytes, and whether it is the
    /// main arena's heap.
    struct Mapping {
        var size: Int
        var permissions: Substring
        var residentBytes = 0
        var isMainHeap: Bool
    }

    @Test("a thread that reserved has its heap accessible up to the reservation, and not resident")
    func reservedThread() async throws {
        let bytes = 24 << 20
        let (before, after) = await onNewThread {
            let before = Self.mappingOfABlock()
            ThreadHeapReservation.reserve(bytes)
            return (before, Self.mappingOfABlock())
        }
        let found = try #require(after)
        #expect(found.permissions.hasPrefix("rw"))
        if !found.isMainHeap {
            #expect(found.size >= bytes)
            // Compared with the same mapping before: a reused arena holds what its threads left.
            #expect(found.residentBytes - (before?.residentBytes ?? 0) < bytes / 2)
        }
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
            if !found.isMainHeap { #expect(found.size >= ThreadHeapReservation.ioThreadBytes) }
        }
    }

    /// Runs `body` on a thread of its own.
    private func onNewThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
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
                    found = Mapping(
                        size: Int(bounds[1] - bounds[0]), permissions: fields[1], isMainHeap: fields.last == "[heap]")
                }
            } else if found != nil, fields.first == "Rss:", fields.count >= 2, let kilobytes = Int(fields[1]) {
                found?.residentBytes = kilobytes << 10
            }
        }
        return found
    }
}
