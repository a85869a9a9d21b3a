import DBus
import Dispatch
import Foundation
import Glibc
import Synchronization
import Testing

@testable import BLE

/// A wait for room on a notify socket, when the socket's owner closes it mid-wait (bluetoothd
/// hung up while `updateValue` waited on a full channel). libdispatch keys its registrations
/// by descriptor number, so a source left on a closed number silences every later source on
/// that number once the kernel reuses it: a clean-clone CI run saw an L2CAP channel in the
/// same process never hear its socket again and time out after 30 s.
@Suite("Writable waiter")
struct WritableWaiterTests {
    /// A non-blocking `SOCK_SEQPACKET` pair whose first end is full.
    static func fullPair() throws -> (FileDescriptor, FileDescriptor) {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        var chunk = [UInt8](repeating: 0, count: 512)
        while send(fds[0], &chunk, chunk.count, Int32(MSG_DONTWAIT)) > 0 {}
        return (FileDescriptor(owning: fds[0]), FileDescriptor(owning: fds[1]))
    }

    /// Whether the peer of a closed end has seen the hang-up (end of file, nothing left).
    static func sawHangUp(_ peer: FileDescriptor) -> Bool {
        var descriptor = pollfd(fd: peer.rawValue, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) == 1 else { return false }
        return descriptor.revents & Int16(POLLHUP) != 0
    }

    /// Whether an epoll instance of this process watches descriptor `number`
    /// (`/proc/self/fdinfo` lists each instance's targets as `tfd: <number>`).
    static func epollWatches(_ number: Int32) -> Bool {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.contains { name in
            guard
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"))
                    == "anon_inode:[eventpoll]",
                let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(name)", encoding: .utf8)
            else { return false }
            return info.split(separator: "\n").contains { line in
                let fields = line.split(whereSeparator: \.isWhitespace)
                return fields.count > 1 && fields[0] == "tfd:" && fields[1] == "\(number)"
            }
        }
    }

    @Test("the wait watches a copy: the owner's close frees the number, the wait's end closes the copy")
    func watchesACopy() async throws {
        let (ours, peer) = try Self.fullPair()
        let waiter = WritableWaiter(watching: ours, queue: DispatchQueue(label: "test.waiter"))
        ours.close()
        // Still open through the copy: bluetoothd's end sees no hang-up while the wait lasts.
        #expect(!Self.sawHangUp(peer))
        waiter.cancel()
        await waiter.wait()
        try await eventually("the peer sees the hang-up once the wait ended") { Self.sawHangUp(peer) }
    }

    @Test("a socket that reuses the number of one closed under a wait still hears its events")
    func reusedNumberStaysAudible() async throws {
        let queue = DispatchQueue(label: "test.waiter")
        // Other tests open descriptors meanwhile: tried until the number is reused here.
        for _ in 0..<50 {
            let (ours, peer) = try Self.fullPair()
            let number = ours.rawValue
            let waiter = WritableWaiter(watching: ours, queue: queue)
            // libdispatch registers a source with epoll on a thread of its own, after resume;
            // the harm needs the registration made before the close, as a wait of any length
            // has it (a close that comes first fails the registration harmlessly): awaited in
            // the kernel's own list of what each epoll instance watches.
            let watched = try #require(waiter.watchedNumber)
            try await eventually("the wait's source is registered with epoll") { Self.epollWatches(watched) }
            ours.close()
            let (reused, sender) = try Self.fullPair()
            defer {
                waiter.cancel()
                _ = peer
            }
            guard reused.rawValue == number else { continue }
            // Drained, so that a datagram can come in; then a read source on the reused number.
            var chunk = [UInt8](repeating: 0, count: 512)
            while recv(sender.rawValue, &chunk, chunk.count, Int32(MSG_DONTWAIT)) > 0 {}
            let heard = Atomic<Bool>(false)
            let source = DispatchSource.makeReadSource(fileDescriptor: reused.rawValue, queue: queue)
            source.setEventHandler { heard.store(true, ordering: .relaxed) }
            source.resume()
            defer { source.cancel() }
            #expect(send(sender.rawValue, &chunk, 1, 0) == 1)
            try await eventually("the read source on the reused number fired") { heard.load(ordering: .relaxed) }
            return
        }
        Issue.record("no descriptor number was reused in 50 tries")
    }
}
