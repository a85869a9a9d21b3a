import Glibc

/// Grows the calling thread's `malloc` heap once, up front, so that it need not grow a page at
/// a time later.
///
/// glibc gives each new thread an arena of its own and grows that arena's heap by exactly what
/// a request lacks, rounded to a page, with an `mprotect` for each growth (its `top_pad` applies
/// only when the heap is first made). The I/O thread allocates what the handlers it runs keep of
/// the signals they take: a client that mirrors a service's objects keeps some for each object
/// that appears (this package's BLE layer, about 2.8 KB for every device a scan finds), so its
/// heap grew by one page every second advertiser: 565 `mprotect` calls in a scan of 1,000, each
/// a change of the process's memory map (reserved, the scan took 0.955x the CPU). A heap stays
/// accessible when its memory is given back (glibc only advises the kernel that the pages are
/// free, unless overcommit is strict, where this does nothing), so blocks taken and freed here
/// leave the room accessible and no page of it resident.
enum ThreadHeapReservation {
    /// What the I/O thread reserves: what a mirror keeps of a few thousand objects.
    static let ioThreadBytes = 8 << 20

    /// Each block is below glibc's threshold for serving a request with a mapping of its own
    /// (128 KiB at least), so that it comes from the thread's heap.
    static let blockBytes = 96 << 10

    /// Makes `bytes` of the calling thread's heap accessible, then frees them.
    static func reserve(_ bytes: Int) {
        let count = (bytes + blockBytes - 1) / blockBytes
        guard count > 0, let blocks = malloc(count * MemoryLayout<UnsafeMutableRawPointer?>.stride) else { return }
        defer { free(blocks) }
        let table = blocks.bindMemory(to: UnsafeMutableRawPointer?.self, capacity: count)
        for index in 0..<count { table[index] = malloc(blockBytes) }
        // In the order taken: each block freed joins the one before, and the last joins them
        // all to the free space at the heap's end, given back to the kernel in one call.
        for index in 0..<count { free(table[index]) }
    }
}
