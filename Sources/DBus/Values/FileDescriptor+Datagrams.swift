import CDBus
import Glibc

extension FileDescriptor {
    /// How ``receiveDatagrams(slotSize:_:)`` ended.
    public enum DatagramReadEnd: Sendable, Equatable {
        /// Nothing more is queued now (the socket is non-blocking): what arrives next makes it
        /// readable again.
        case drained
        /// The peer closed its end, after every datagram it sent was handed over.
        case hungUp
        /// The socket failed with this `errno`.
        case failed(Int32)
    }

    /// How many datagrams one system call reads at most.
    public static let datagramBatch = 16

    /// Reads the datagrams queued on this non-blocking socket (`SOCK_SEQPACKET` or
    /// `SOCK_DGRAM`), up to ``datagramBatch`` per `recvmmsg(2)`, and hands each to `body` in
    /// order (valid only during the call), until none is queued, the peer hung up or the socket
    /// failed. A datagram longer than `slotSize` is cut to it.
    ///
    /// One system call per batch instead of one per datagram, and none to learn that the queue
    /// is empty when a batch came back short (readiness is level-triggered: what arrived meanwhile
    /// is reported again). At end of file the kernel fills a batch with empty datagrams: a run
    /// of empty ones at a batch's end is taken for the hang-up when the socket reports one, and
    /// delivered otherwise (an empty notification is valid).
    public func receiveDatagrams(slotSize: Int, _ body: (UnsafeRawBufferPointer) -> Void) -> DatagramReadEnd {
        let fd = rawValue
        let batch = Self.datagramBatch
        return withUnsafeTemporaryAllocation(byteCount: slotSize * batch, alignment: 16) { buffer in
            withUnsafeTemporaryAllocation(of: iovec.self, capacity: batch) { vectors in
                withUnsafeTemporaryAllocation(of: cdbus_mmsghdr.self, capacity: batch) { headers in
                    guard let base = buffer.baseAddress, let vector = vectors.baseAddress,
                        let header = headers.baseAddress
                    else { return .failed(EINVAL) }
                    for index in 0..<batch {
                        (vector + index).initialize(to: iovec(iov_base: base + index * slotSize, iov_len: slotSize))
                        var message = cdbus_mmsghdr()
                        message.msg_hdr.msg_iov = vector + index
                        message.msg_hdr.msg_iovlen = 1
                        (header + index).initialize(to: message)
                    }
                    var resetSeen = false
                    while true {
                        let count = Int(cdbus_recvmmsg(fd, header, UInt32(batch), Int32(MSG_DONTWAIT), nil))
                        // A peer that closed with our data unread in its socket leaves a reset,
                        // reported once and before what it sent: read on, up to the end of file.
                        if count < 0 && errno == ECONNRESET && !resetSeen {
                            resetSeen = true
                            continue
                        }
                        if count < 0 {
                            guard errno == EAGAIN || errno == EINTR else { return .failed(errno) }
                            // After a reset, an empty queue is the end: a socket whose link
                            // dropped reports the reset, then nothing, and no end of file.
                            return resetSeen ? .hungUp : .drained
                        }
                        // Where the trailing run of empty datagrams starts.
                        var filled = count
                        while filled > 0 && header[filled - 1].msg_len == 0 { filled -= 1 }
                        let ended = filled < count && Self.reportsHangUp(fd)
                        for index in 0..<(ended ? filled : count) {
                            body(
                                UnsafeRawBufferPointer(
                                    start: base + index * slotSize, count: Int(header[index].msg_len)))
                        }
                        if ended { return .hungUp }
                        // After a reset, read on to the end (an end of file, or an empty queue).
                        if count < batch && !resetSeen { return .drained }
                    }
                }
            }
        }
    }
}
