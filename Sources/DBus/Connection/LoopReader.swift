/// What the I/O loop does when an fd it reads for a user is readable (``IOLoop``'s readers).
enum LoopReader {
    /// Calls the user with the poll events seen; the user reads
    /// (``Connection/addReader(_:onReadable:)``).
    case events(@Sendable (Int16) -> Void)
    /// The loop reads the socket's datagrams itself, into the slots it keeps, and hands each
    /// over (``Connection/addDatagramReader(_:slotSize:onDatagram:onEnd:)``).
    case datagrams(DatagramReading)
}

/// A datagram socket the loop reads for a user, and what to call with what it reads.
///
/// A class: the loop copies a reader out of its table before calling it (the call may remove
/// it), and a copy of a class is one retain where a struct's is one per closure it holds.
final class DatagramReading: Sendable {
    let descriptor: FileDescriptor
    /// The longest datagram the user expects; a longer one is cut to it.
    let slotSize: Int
    let onDatagram: @Sendable (UnsafeRawBufferPointer) -> Void
    let onEnd: @Sendable (FileDescriptor.DatagramReadEnd) -> Void

    init(
        descriptor: FileDescriptor, slotSize: Int, onDatagram: @escaping @Sendable (UnsafeRawBufferPointer) -> Void,
        onEnd: @escaping @Sendable (FileDescriptor.DatagramReadEnd) -> Void
    ) {
        self.descriptor = descriptor
        self.slotSize = slotSize
        self.onDatagram = onDatagram
        self.onEnd = onEnd
    }
}

/// The loop's readers by descriptor number. The kernel hands out the lowest free numbers, so
/// the table is as long as the highest descriptor read, and a wake-up finds its reader by
/// index: no hashing on the path of every datagram and every readable socket.
struct LoopReaders {
    private var byDescriptor: [LoopReader?] = []
    /// The descriptors read, in the order they were added: what the readiness set watches.
    private(set) var descriptors: [Int32] = []

    /// The reader of `fd`, if the loop reads it for a user.
    subscript(fd: Int32) -> LoopReader? {
        fd >= 0 && Int(fd) < byDescriptor.count ? byDescriptor[Int(fd)] : nil
    }

    /// Reads `fd` with `reader` from now on, in place of any reader it had. A negative number
    /// (a descriptor closed already) is no socket to watch: it is left out, and its reader
    /// never called.
    mutating func set(_ reader: LoopReader, for fd: Int32) {
        guard fd >= 0 else { return }
        if Int(fd) >= byDescriptor.count {
            byDescriptor.append(contentsOf: repeatElement(nil, count: Int(fd) + 1 - byDescriptor.count))
        }
        if byDescriptor[Int(fd)] == nil { descriptors.append(fd) }
        byDescriptor[Int(fd)] = reader
    }

    /// Stops reading `fd`; returns whether it was read.
    mutating func remove(_ fd: Int32) -> Bool {
        guard self[fd] != nil else { return false }
        byDescriptor[Int(fd)] = nil
        descriptors.removeAll { $0 == fd }
        return true
    }
}
