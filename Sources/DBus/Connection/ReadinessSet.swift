import CDBus
import Glibc

/// The fds the I/O loop sleeps on, kept in an epoll set.
///
/// `poll` on the wake-up eventfd and the bus socket hooks the thread into both fds' wait
/// queues and unhooks it again on every wake-up, under their spin locks: profiled under a
/// stream of GATT reads, ble-sim's `poll` took about 1.4 µs a read more kernel time than the
/// C floor's single-fd one (2 % of a read). An epoll set is hooked in once. libdbus toggles its write watch around every send, so the wanted
/// events are compared with the registered ones just before sleeping, and `epoll_ctl` runs
/// only when they really differ (after a send that could not finish at once).
struct ReadinessSet: ~Copyable {
    /// One ready fd and what it is ready for, in `poll`'s terms (`POLLIN`, `POLLOUT`, …).
    struct Ready {
        var fd: Int32
        var events: Int16
    }

    private let epollFD: Int32
    /// What each fd is registered for; an fd wanting nothing is removed, not registered with
    /// no events, since epoll would still report its hang-up on every wait.
    /// A connection has one socket (plus the eventfd): a short array beats hashing.
    private var registered: [(fd: Int32, mask: UInt32)] = []
    private var ready: [epoll_event]
    /// How many entries of `ready` the last ``wait(timeout:)`` filled.
    private var readyCount = 0

    /// Why no epoll set could be made (an `errno`), or 0.
    let openError: Int32

    /// Opens an epoll set; see ``isOpen``.
    init() {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        openError = epollFD < 0 ? errno : 0
        ready = Array(repeating: epoll_event(), count: 8)
    }

    /// False when no epoll set could be made (the process is out of fds or memory).
    var isOpen: Bool { epollFD >= 0 }

    deinit { if epollFD >= 0 { Glibc.close(epollFD) } }

    /// Registers, changes or removes fds so that each is watched for exactly `wanted`
    /// (`poll` event bits); registered fds missing from `wanted` are removed. False when an
    /// fd could not be registered, which leaves it unwatched.
    mutating func update(_ wanted: [(fd: Int32, events: Int16)]) -> Bool {
        var complete = true
        for (fd, events) in wanted {
            let mask = Self.epollMask(events)
            let index = registered.firstIndex { $0.fd == fd }
            if let index, registered[index].mask == mask { continue }
            if mask == 0 {
                if let index { remove(at: index) }
            } else {
                complete = register(fd, mask, at: index) && complete
            }
        }
        // Backwards, so removing keeps the indices still to visit.
        for index in registered.indices.reversed() where !wanted.contains(where: { $0.fd == registered[index].fd }) {
            remove(at: index)
        }
        return complete
    }

    /// Takes `fd` out of the set, so that the next ``update(_:)`` registers it afresh: the
    /// fd may be closed, and its number handed to a new fd that epoll knows nothing of.
    mutating func forget(_ fd: Int32) {
        if let index = registered.firstIndex(where: { $0.fd == fd }) { remove(at: index) }
    }

    /// Blocks until an fd is ready or `timeout` ms pass (`-1` waits for ever). Returns how many
    /// fds are ready (read them with ``ready(_:)``), 0 on a timeout or a signal, or nil when
    /// the wait itself failed.
    mutating func wait(timeout: Int32) -> Int? {
        let count = ready.withUnsafeMutableBufferPointer { buffer in
            epoll_wait(epollFD, buffer.baseAddress, Int32(buffer.count), timeout)
        }
        readyCount = max(0, Int(count))
        if count < 0 { return errno == EINTR ? 0 : nil }
        return readyCount
    }

    /// The `index`th fd the last wait found ready.
    func ready(_ index: Int) -> Ready {
        precondition(index < readyCount, "no such ready fd")
        let event = ready[index]
        return Ready(fd: event.data.fd, events: Self.pollEvents(event.events))
    }

    private mutating func register(_ fd: Int32, _ mask: UInt32, at index: Int?) -> Bool {
        var event = epoll_event()
        event.events = mask
        event.data.fd = fd
        var result = epoll_ctl(epollFD, index == nil ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event)
        // The fd was closed and its number reused behind our back, or is there already: retry
        // with the other operation.
        if result != 0 && errno == ENOENT { result = epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) }
        if result != 0 && errno == EEXIST { result = epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event) }
        switch (index, result == 0) {
        case (let index?, true): registered[index].mask = mask
        case (let index?, false): registered.remove(at: index)
        case (nil, true): registered.append((fd, mask))
        case (nil, false): break
        }
        return result == 0
    }

    private mutating func remove(at index: Int) {
        let fd = registered.remove(at: index).fd
        // A closed fd has left the set by itself (EBADF/ENOENT): nothing to undo.
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
    }

    private static func epollMask(_ events: Int16) -> UInt32 {
        var mask: UInt32 = 0
        if events & Int16(POLLIN) != 0 { mask |= EPOLLIN.rawValue }
        if events & Int16(POLLOUT) != 0 { mask |= EPOLLOUT.rawValue }
        return mask
    }

    private static func pollEvents(_ mask: UInt32) -> Int16 {
        var events: Int16 = 0
        if mask & EPOLLIN.rawValue != 0 { events |= Int16(POLLIN) }
        if mask & EPOLLOUT.rawValue != 0 { events |= Int16(POLLOUT) }
        if mask & EPOLLERR.rawValue != 0 { events |= Int16(POLLERR) }
        if mask & EPOLLHUP.rawValue != 0 { events |= Int16(POLLHUP) }
        return events
    }
}
