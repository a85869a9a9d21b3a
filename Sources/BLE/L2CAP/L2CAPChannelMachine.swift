/// The rules of one L2CAP channel, without I/O or clock (style.md 3–5): the order of sends,
/// when to wait for the socket to take more, when to stop reading because the app reads
/// slower than the peer sends, and how everything under way ends with the channel.
///
/// The shell (``L2CAPChannelCore``) feeds it what the socket and the app did and runs the
/// actions it returns. A `SOCK_SEQPACKET` send takes a whole SDU or nothing, so a send is
/// either written or not started: cancelling one that waits never tears an SDU.
struct L2CAPChannelMachine: Sendable {
    /// Why the channel ended.
    enum End: Equatable, Sendable {
        /// ``L2CAPChannel/close()``.
        case closedLocally
        /// The peer closed it (end of file on the socket).
        case peerClosed
        /// The link to the peer dropped.
        case linkLost
        /// The socket failed; the text says how.
        case failed(String)
    }

    /// Why a send did not go out.
    enum SendFailure: Equatable, Sendable {
        case tooLarge(size: Int, mtu: Int)
        case cancelled
        case timedOut
        case ended(End)
    }

    enum Action: Equatable, Sendable {
        /// Write this send's SDU now (it is the oldest), then report ``wrote(_:)`` or ``wouldBlock()``.
        case write(UInt64)
        /// Its caller returns: the SDU is in the socket.
        case sent(UInt64)
        case failSend(UInt64, SendFailure)
        /// Tell the machine when the socket takes more (``writable()``).
        case armWritable
        case disarmWritable
        /// Hand the oldest buffered SDU to the waiting reader.
        case handOver
        /// End the waiting reader's iteration.
        case finishReader
        case pauseReading
        case resumeReading
        /// Drop what was received and not read (the app closed the channel).
        case discardBuffered
        /// Stop watching the socket and close it.
        case closeSocket
    }

    /// What a reader asking for the next SDU gets.
    enum ReadStep: Equatable, Sendable {
        /// The oldest buffered SDU, now.
        case takeBuffered
        /// Nothing yet: wait for ``Action/handOver`` or ``Action/finishReader``.
        case wait
        /// The channel ended and everything received was read.
        case end
    }

    let sendMTU: Int
    /// SDUs held for a slow reader before the socket is no longer read (the kernel then stops
    /// granting the peer credits: back-pressure reaches the sender, nothing is dropped).
    let bufferLimit: Int
    private(set) var end: End?
    /// Sends not yet written, oldest first.
    private var queued: [UInt64] = []
    /// The oldest send met a full socket: nothing is written before ``writable()``.
    private var blocked = false
    /// The shell watches the socket for room (``Action/armWritable`` given, not yet
    /// ``Action/disarmWritable``). Kept on while the sends that waited are written, dropped
    /// once none is left: a watch left on fires again and again while the socket has room.
    private var watching = false
    /// A send met the peer's hang-up: nothing more goes out, while what the peer sent before
    /// closing may still wait in the socket, unread (see ``peerStoppedReading()``).
    private var sendingEnded = false
    private(set) var buffered = 0
    private var readerWaiting = false
    private var readingPaused = false

    init(sendMTU: Int, bufferLimit: Int) {
        self.sendMTU = sendMTU
        self.bufferLimit = max(1, bufferLimit)
    }

    var isEnded: Bool { end != nil }

    /// Where sending and receiving stand, in words: `2 sends waiting, socket full, room
    /// watched; 64 SDUs unread, reading paused`.
    var waitingSummary: String {
        let sending =
            "\(queued.count) sends waiting" + (blocked ? ", socket full" : "") + (watching ? ", room watched" : "")
        let receiving = "\(buffered) SDUs unread" + (readingPaused ? ", reading paused" : "")
        return sending + "; " + receiving
    }

    // MARK: Sending

    mutating func send(_ id: UInt64, size: Int) -> [Action] {
        if let end { return [.failSend(id, .ended(end))] }
        if sendingEnded { return [.failSend(id, .ended(.peerClosed))] }
        guard size <= sendMTU else { return [.failSend(id, .tooLarge(size: size, mtu: sendMTU))] }
        queued.append(id)
        return queued.count == 1 && !blocked ? [.write(id)] : []
    }

    /// The oldest send's SDU went into the socket.
    mutating func wrote(_ id: UInt64) -> [Action] {
        guard queued.first == id else { return [] }
        queued.removeFirst()
        return [.sent(id)] + next()
    }

    /// The socket is full: wait until it takes more.
    mutating func wouldBlock() -> [Action] {
        guard !blocked, end == nil else { return [] }
        blocked = true
        if watching { return [] }
        watching = true
        return [.armWritable]
    }

    /// The socket takes more.
    mutating func writable() -> [Action] {
        guard blocked else { return [] }
        blocked = false
        return next()
    }

    /// A send met the peer's hang-up (`EPIPE`): every send not written fails, and so does
    /// every later one. The channel does not end here: the peer may have sent its last SDUs
    /// before closing, and they wait in the socket (all of them, when reading was paused for
    /// a slow reader); reading goes on, and the end of file ends the channel (``ended(_:)``).
    /// Closing the socket at once, as on any other end, lost them.
    mutating func peerStoppedReading() -> [Action] {
        guard end == nil, !sendingEnded else { return [] }
        sendingEnded = true
        return stopSending(.peerClosed)
    }

    /// Every send not written fails with `why`, and the watch for room ends.
    private mutating func stopSending(_ why: End) -> [Action] {
        var actions = queued.map { Action.failSend($0, .ended(why)) }
        queued.removeAll()
        blocked = false
        if watching {
            watching = false
            actions.append(.disarmWritable)
        }
        return actions
    }

    /// A send's caller gave up (cancelled, or its deadline passed) before it was written.
    mutating func abandon(_ id: UInt64, _ why: SendFailure) -> [Action] {
        guard let index = queued.firstIndex(of: id) else { return [] }
        queued.remove(at: index)
        return [.failSend(id, why)] + (index == 0 ? next() : [])
    }

    /// The oldest send's turn; once none is left, the watch for room ends.
    private mutating func next() -> [Action] {
        if let head = queued.first { return blocked ? [] : [.write(head)] }
        blocked = false
        if watching {
            watching = false
            return [.disarmWritable]
        }
        return []
    }

    // MARK: Receiving

    /// An SDU came in (the shell buffered it).
    mutating func received() -> [Action] {
        guard end == nil else { return [] }
        buffered += 1
        var actions: [Action] = []
        if readerWaiting {
            readerWaiting = false
            buffered -= 1
            actions.append(.handOver)
        }
        if buffered >= bufferLimit && !readingPaused && end == nil {
            readingPaused = true
            actions.append(.pauseReading)
        }
        return actions
    }

    /// The reader asks for the next SDU.
    mutating func read() -> (ReadStep, [Action]) {
        if buffered > 0 {
            buffered -= 1
            if readingPaused && buffered <= bufferLimit / 2 && end == nil {
                readingPaused = false
                return (.takeBuffered, [.resumeReading])
            }
            return (.takeBuffered, [])
        }
        if end != nil || readerWaiting { return (.end, []) }
        readerWaiting = true
        return (.wait, [])
    }

    /// The waiting reader's task was cancelled.
    mutating func readerCancelled() -> [Action] {
        guard readerWaiting else { return [] }
        readerWaiting = false
        return [.finishReader]
    }

    // MARK: Ending

    /// The channel ends: every send not written fails, the reader ends once it read what
    /// arrived before (a local close drops that), the socket is closed.
    mutating func ended(_ why: End) -> [Action] {
        guard end == nil else { return [] }
        end = why
        var actions = stopSending(why)
        if why == .closedLocally && buffered > 0 {
            buffered = 0
            actions.append(.discardBuffered)
        }
        if readerWaiting {
            readerWaiting = false
            actions.append(.finishReader)
        }
        actions.append(.closeSocket)
        return actions
    }
}
