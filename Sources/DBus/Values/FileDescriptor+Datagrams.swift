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

    /// Room for one `recvmmsg(2)` batch: ``datagramBatch`` slots of `slotSize` bytes and the
    /// headers that point at them, made once and reused by every read of a socket.
    ///
    /// A batch of 512-byte slots is 8 KiB: too large for the stack, so reading into a
    /// temporary one allocated it on the heap, and set its headers up again, at every wake-up
    /// (about 800 instructions per notification read from an `AcquireNotify` socket). Not
    /// `Sendable`: one read fills the slots at a time. Reads that may run on several threads
    /// share them behind a lock; ``Connection/addDatagramReader(_:slotSize:onDatagram:onEnd:)``
    /// reads into slots its I/O thread alone fills.
    public final class DatagramSlots {
        /// The most a slot holds; a longer datagram is cut to it.
        public let slotSize: Int
        private let bytes: UnsafeMutableRawPointer
        private let vectors: UnsafeMutablePointer<iovec>
        fileprivate let headers: UnsafeMutablePointer<cdbus_mmsghdr>

        /// Room for a batch of datagrams of up to `slotSize` bytes each.
        public init(slotSize: Int) {
            let batch = FileDescriptor.datagramBatch
            self.slotSize = max(1, slotSize)
            bytes = UnsafeMutableRawPointer.allocate(byteCount: self.slotSize * batch, alignment: 16)
            vectors = UnsafeMutablePointer<iovec>.allocate(capacity: batch)
            headers = UnsafeMutablePointer<cdbus_mmsghdr>.allocate(capacity: batch)
            for index in 0..<batch {
                (vectors + index).initialize(
                    to: iovec(iov_base: bytes + index * self.slotSize, iov_len: self.slotSize))
                var message = cdbus_mmsghdr()
                message.msg_hdr.msg_iov = vectors + index
                message.msg_hdr.msg_iovlen = 1
                (headers + index).initialize(to: message)
            }
        }

        deinit {
            headers.deallocate()
            vectors.deallocate()
            bytes.deallocate()
        }

        /// The bytes slot `index` received.
        fileprivate func datagram(_ index: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: bytes + index * slotSize, count: Int(headers[index].msg_len))
        }
    }

    /// Reads the datagrams queued on this non-blocking socket (`SOCK_SEQPACKET` or
    /// `SOCK_DGRAM`) as ``receiveDatagrams(into:_:)`` does, into slots made for this read.
    public func receiveDatagrams(slotSize: Int, _ body: (UnsafeRawBufferPointer) -> Void) -> DatagramReadEnd {
        receiveDatagrams(into: DatagramSlots(slotSize: slotSize), body)
    }

    /// Reads the datagrams queued on this non-blocking socket (`SOCK_SEQPACKET` or
    /// `SOCK_DGRAM`) into `slots`, up to ``datagramBatch`` per `recvmmsg(2)`, and hands each to
    /// `body` in order (valid only during the call), until none is queued, the peer hung up or
    /// the socket failed. A datagram longer than the slots is cut to them.
    ///
    /// One system call per batch instead of one per datagram, and none to learn that the queue
    /// is empty when a batch came back short (readiness is level-triggered: what arrived meanwhile
    /// is reported again). At end of file the kernel fills a batch with empty datagrams: a run
    /// of empty ones at a batch's end is taken for the hang-up when the socket reports one, and
    /// delivered otherwise (an empty notification is valid).
    public func receiveDatagrams(
        into slots: DatagramSlots, _ body: (UnsafeRawBufferPointer) -> Void
    ) -> DatagramReadEnd {
        let fd = rawValue
        let batch = Self.datagramBatch
        let header = slots.headers
        var resetSeen = false
        while true {
            let count = Int(cdbus_recvmmsg(fd, header, UInt32(batch), Int32(MSG_DONTWAIT), nil))
            // A peer that closed with our data unread in its socket leaves a reset, reported
            // once and before what it sent: read on, up to the end of file.
            if count < 0 && errno == ECONNRESET && !resetSeen {
                resetSeen = true
                continue
            }
            if count < 0 {
                guard errno == EAGAIN || errno == EINTR else { return .failed(errno) }
                // After a reset, an empty queue is the end: a socket whose link dropped
                // reports the reset, then nothing, and no end of file.
                return resetSeen ? .hungUp : .drained
            }
            // Where the trailing run of empty datagrams starts.
            var filled = count
            while filled > 0 && header[filled - 1].msg_len == 0 { filled -= 1 }
            let ended = filled < count && Self.reportsHangUp(fd)
            for index in 0..<(ended ? filled : count) { body(slots.datagram(index)) }
            if ended { return .hungUp }
            // After a reset, read on to the end (an end of file, or an empty queue).
            if count < batch && !resetSeen { return .drained }
        }
    }
}
