import DBus

/// How an LE credit-based L2CAP channel is asked for.
public struct L2CAPConnectRequest: Sendable, Hashable {
    /// The adapter the channel leaves from.
    public var local: L2CAPEndpoint
    /// The device it goes to.
    public var peer: L2CAPEndpoint
    /// The peer's PSM.
    public var psm: UInt16
    /// What the channel requires of the link.
    public var security: L2CAPSecurity
    /// The largest SDU this side accepts; the kernel's default when nil.
    public var receiveMTU: UInt16?

    /// Creates a request.
    public init(
        local: L2CAPEndpoint, peer: L2CAPEndpoint, psm: UInt16, security: L2CAPSecurity = .low,
        receiveMTU: UInt16? = nil
    ) {
        self.local = local
        self.peer = peer
        self.psm = psm
        self.security = security
        self.receiveMTU = receiveMTU
    }
}

/// How a server PSM is published.
public struct L2CAPListenRequest: Sendable, Hashable {
    /// The adapter that accepts channels.
    public var local: L2CAPEndpoint
    /// A fixed PSM, or nil for one the kernel picks from ``L2CAPPSM/dynamicRange``.
    public var psm: UInt16?
    /// What an accepted channel requires of its link.
    public var security: L2CAPSecurity
    /// The largest SDU this side accepts; the kernel's default when nil.
    public var receiveMTU: UInt16?

    /// Creates a request.
    public init(local: L2CAPEndpoint, psm: UInt16? = nil, security: L2CAPSecurity = .low, receiveMTU: UInt16? = nil) {
        self.local = local
        self.psm = psm
        self.security = security
        self.receiveMTU = receiveMTU
    }
}

/// A connected channel: a non-blocking `SOCK_SEQPACKET` socket (one SDU per `send`/`recv`),
/// who is at the other end, and the MTUs the two sides agreed.
public struct L2CAPSocket: Sendable {
    /// The socket, non-blocking and close-on-exec.
    public var descriptor: FileDescriptor
    /// The PSM of the channel.
    public var psm: UInt16
    /// The other end.
    public var peer: L2CAPEndpoint
    /// The largest SDU this side may send.
    public var sendMTU: Int
    /// The largest SDU this side accepts.
    public var receiveMTU: Int

    /// Creates a socket description.
    public init(descriptor: FileDescriptor, psm: UInt16, peer: L2CAPEndpoint, sendMTU: Int, receiveMTU: Int) {
        self.descriptor = descriptor
        self.psm = psm
        self.peer = peer
        self.sendMTU = sendMTU
        self.receiveMTU = receiveMTU
    }
}

/// A published PSM: its descriptor turns readable while a channel waits to be accepted.
public struct L2CAPListener: Sendable {
    /// Readable while ``L2CAPTransport/accept(_:)`` has a channel to hand out; non-blocking.
    public var descriptor: FileDescriptor
    /// The PSM, as asked for or as the kernel assigned it.
    public var psm: UInt16
    /// The adapter it listens on.
    public var local: L2CAPEndpoint

    /// Creates a listener description.
    public init(descriptor: FileDescriptor, psm: UInt16, local: L2CAPEndpoint) {
        self.descriptor = descriptor
        self.psm = psm
        self.local = local
    }
}

/// Where L2CAP channels come from: the kernel's Bluetooth sockets (``KernelL2CAPTransport``),
/// or a stand-in such as the simulator's, which hands out Unix `SOCK_SEQPACKET` socket pairs.
///
/// BlueZ does not carry L2CAP over D-Bus: a channel is a socket. Every call here is
/// non-blocking; the caller waits for readiness on the descriptors (writable once a connect
/// finished, readable while a channel waits to be accepted) and owns the deadlines.
public protocol L2CAPTransport: Sendable {
    /// Starts connecting. The socket returned turns writable (or reports an error or hang-up)
    /// once the channel is up or refused; then call ``finishConnect(_:_:)``.
    func startConnect(_ request: L2CAPConnectRequest) throws(L2CAPTransportError) -> FileDescriptor
    /// The channel, once the socket of ``startConnect(_:)`` is ready; throws what refused it.
    func finishConnect(_ descriptor: FileDescriptor, _ request: L2CAPConnectRequest) throws(L2CAPTransportError)
        -> L2CAPSocket
    /// Publishes a PSM.
    func listen(_ request: L2CAPListenRequest) throws(L2CAPTransportError) -> L2CAPListener
    /// A channel waiting on `listener`, or nil when none waits.
    func accept(_ listener: L2CAPListener) throws(L2CAPTransportError) -> L2CAPSocket?
    /// Unpublishes the PSM; channels already accepted stay open. The caller closes the
    /// listener's descriptor afterwards, once nothing watches it.
    func stopListening(_ listener: L2CAPListener)
}
