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
struct DatagramReading {
    let descriptor: FileDescriptor
    /// The longest datagram the user expects; a longer one is cut to it.
    let slotSize: Int
    let onDatagram: @Sendable (UnsafeRawBufferPointer) -> Void
    let onEnd: @Sendable (FileDescriptor.DatagramReadEnd) -> Void
}
