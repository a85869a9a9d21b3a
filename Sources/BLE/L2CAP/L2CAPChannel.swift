import BlueZ
import DBus
import Foundation

/// An LE credit-based L2CAP channel, as Core Bluetooth's `CBL2CAPChannel`: SDUs both ways
/// over the link, with the kernel's flow control, at several times GATT's throughput.
///
/// Opened by a central with ``Peripheral/openL2CAPChannel(psm:options:timeout:)``, or
/// accepted by a peripheral manager from ``L2CAPPublication/channels``. Read what comes in
/// from ``incoming`` (one reader); ``send(_:timeout:)`` waits while the peer's credits are
/// used up, so a fast sender never piles data in memory. A reader slower than the peer
/// stops the socket being read, which stops the peer's credits: nothing is dropped.
///
/// The channel ends when the app calls ``close()`` (or lets go of the channel and of every
/// iterator of ``incoming``), the peer closes it, or the link drops; then ``incoming`` ends once what arrived before was
/// read, sends fail, and ``endError`` says why. A peer that closes while SDUs it sent still
/// wait unread (a reader slower than the peer) loses none of them: sends fail at once, and
/// the channel ends when the reader reaches the peer's end.
public final class L2CAPChannel: Sendable, CustomStringConvertible {
    /// The PSM the channel was opened on.
    public let psm: UInt16
    /// The peripheral at the other end, for a channel a central opened.
    public let peripheral: PeripheralID?
    /// The central at the other end, for a channel a peripheral manager accepted.
    public let central: CentralID?
    /// The largest SDU ``send(_:timeout:)`` takes (the peer's receive MTU).
    public let sendMTU: Int
    /// The largest SDU the peer may send.
    public let receiveMTU: Int
    /// The deadline of a send that names none.
    let sendTimeout: Duration
    let core: L2CAPChannelCore

    init(
        _ socket: L2CAPSocket, peripheral: PeripheralID? = nil, central: CentralID? = nil,
        options: L2CAPChannelOptions, diagnostics: BLEDiagnostics?
    ) {
        psm = socket.psm
        self.peripheral = peripheral
        self.central = central
        sendMTU = socket.sendMTU
        receiveMTU = socket.receiveMTU
        sendTimeout = options.sendTimeout
        core = L2CAPChannelCore(
            socket, bufferLimit: options.receiveBufferSize, describe: "L2CAP channel on PSM \(socket.psm)",
            diagnostics: diagnostics)
    }

    /// The SDUs the peer sent, in order, for one reader; ends with the channel, after the
    /// SDUs that arrived before its end.
    public var incoming: L2CAPIncomingSDUs { L2CAPIncomingSDUs(core: core) }

    /// Sends one SDU (at most ``sendMTU`` bytes; the kernel splits it into link-layer
    /// packets), waiting while the peer cannot take more.
    ///
    /// Returns once the kernel holds the SDU. Sends made concurrently go out in the order
    /// they were called. A send that is cancelled or passes its deadline while waiting did
    /// not go out at all: an SDU is never sent in part.
    ///
    /// - Throws: ``BLEError/Code/invalidArguments`` for an SDU over ``sendMTU``;
    ///   ``BLEError/Code/timeout``; ``BLEError/Code/cancelled`` for a cancelled task or a
    ///   channel closed by the app; ``BLEError/Code/disconnected`` once the peer closed it or
    ///   the link dropped.
    public func send(_ sdu: Data, timeout: Duration? = nil) async throws(BLEError) {
        try await core.send(sdu, deadline: .now + (timeout ?? sendTimeout))
    }

    /// Closes the channel: sends waiting fail with ``BLEError/Code/cancelled``, ``incoming``
    /// ends, what was received and not read is dropped.
    public func close() {
        core.end(.closedLocally)
    }

    /// Whether the channel still carries data.
    public var isOpen: Bool { core.isOpen }

    /// Why the channel ended (``BLEError/Code/cancelled`` after ``close()``), nil while open.
    public var endError: BLEError? { core.endError }

    /// `L2CAP channel on PSM 0x0080 to hci0/AA:…`
    public var description: String {
        let peer = peripheral?.description ?? central?.description ?? "?"
        return "L2CAP channel on PSM 0x" + String(psm, radix: 16) + " to \(peer)"
    }

}

/// The SDUs a channel receives, as an async sequence (see ``L2CAPChannel/incoming``).
public struct L2CAPIncomingSDUs: AsyncSequence, Sendable {
    /// One SDU.
    public typealias Element = Data
    /// Iteration never throws: how the channel ended is ``L2CAPChannel/endError``.
    public typealias Failure = Never
    let core: L2CAPChannelCore

    /// Iterates the SDUs.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let core: L2CAPChannelCore

        /// The next SDU, or nil once the channel ended and every earlier SDU was read (or the
        /// iterating task was cancelled).
        public mutating func next() async -> Data? { await core.next() }
    }

    /// Makes an iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(core: core) }
}

/// How a channel is opened or accepted.
public struct L2CAPChannelOptions: Sendable, Hashable {
    /// The largest SDU this side accepts; the kernel's default (672 bytes on Linux) when nil.
    public var receiveMTU: UInt16?
    /// SDUs held for a slow reader of ``L2CAPChannel/incoming`` before the socket is no
    /// longer read and the peer runs out of credits.
    public var receiveBufferSize = 256
    /// The deadline of a ``L2CAPChannel/send(_:timeout:)`` that names none.
    public var sendTimeout: Duration = .seconds(30)

    /// The defaults.
    public init() {}
}

extension BLEError {
    /// What an L2CAP socket call's failure means to an app.
    init(_ error: L2CAPTransportError) {
        let code: Code =
            switch error.kind {
            case .refused: .connectionFailed
            case .unreachable: .notConnected
            case .timedOut: .timeout
            case .addressInUse: .alreadyExists
            case .invalidArguments: .invalidArguments
            case .notPermitted: .notPermitted
            case .unsupported: .notSupported
            case .closed: .disconnected
            case .io: .failed
            }
        self.init(code, message: error.message, underlying: error)
    }
}
