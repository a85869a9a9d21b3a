import DBus
import Glibc

/// LE credit-based channels over the kernel's Bluetooth sockets (`AF_BLUETOOTH`,
/// `BTPROTO_L2CAP`, `SOCK_SEQPACKET`): what a real adapter uses. The link itself is
/// bluetoothd's; the kernel runs the channel over it.
public struct KernelL2CAPTransport: L2CAPTransport {
    // <bluetooth/bluetooth.h> and <bluetooth/l2cap.h>, which are not installed here.
    static let btprotoL2CAP: Int32 = 0
    static let solBluetooth: Int32 = 274
    static let btSecurity: Int32 = 4
    static let btSendMTU: Int32 = 12
    static let btReceiveMTU: Int32 = 13

    /// Creates the transport.
    public init() {}

    /// Binds a socket to the adapter and connects it without blocking (`EINPROGRESS`).
    public func startConnect(_ request: L2CAPConnectRequest) throws(L2CAPTransportError) -> FileDescriptor {
        let socket = try Self.openSocket(
            local: request.local, psm: 0, security: request.security, mtu: request.receiveMTU)
        var address = L2CAPSocketAddress(psm: request.psm, endpoint: request.peer).bytes
        let result = Self.withSocketAddress(&address) { pointer, length in
            Glibc.connect(socket.rawValue, pointer, length)
        }
        if result != 0 && errno != EINPROGRESS {
            throw L2CAPTransportError(errno: errno, during: "connecting to PSM \(request.psm) of \(request.peer)")
        }
        return socket
    }

    /// Reads `SO_ERROR`, then the MTUs the two sides agreed.
    public func finishConnect(_ descriptor: FileDescriptor, _ request: L2CAPConnectRequest) throws(L2CAPTransportError)
        -> L2CAPSocket
    {
        var failure: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(descriptor.rawValue, SOL_SOCKET, SO_ERROR, &failure, &length) != 0 { failure = errno }
        if failure != 0 {
            throw L2CAPTransportError(errno: failure, during: "connecting to PSM \(request.psm) of \(request.peer)")
        }
        return try Self.describe(descriptor, psm: request.psm, peer: request.peer)
    }

    /// Binds (PSM 0: the kernel assigns one), listens, and reads the PSM back.
    public func listen(_ request: L2CAPListenRequest) throws(L2CAPTransportError) -> L2CAPListener {
        let socket = try Self.openSocket(
            local: request.local, psm: request.psm ?? 0, security: request.security, mtu: request.receiveMTU)
        guard Glibc.listen(socket.rawValue, 8) == 0 else {
            throw L2CAPTransportError(errno: errno, during: "listening on \(request.local)")
        }
        guard let bound = Self.address(of: socket.rawValue, peer: false) else {
            throw L2CAPTransportError(.io, message: "the kernel did not say which PSM it assigned")
        }
        return L2CAPListener(descriptor: socket, psm: bound.psm, local: request.local)
    }

    /// `accept`, made non-blocking, with the central's address and the MTUs.
    public func accept(_ listener: L2CAPListener) throws(L2CAPTransportError) -> L2CAPSocket? {
        var storage = [UInt8](repeating: 0, count: 32)
        var length = socklen_t(storage.count)
        let accepted = Self.withSocketAddress(&storage) { pointer, _ in
            Glibc.accept(listener.descriptor.rawValue, pointer, &length)
        }
        if accepted < 0 {
            if errno == EAGAIN || errno == EINTR || errno == ECONNABORTED { return nil }
            throw L2CAPTransportError(errno: errno, during: "accepting on PSM \(listener.psm)")
        }
        let descriptor = FileDescriptor(owning: accepted)
        // accept4 is not visible from Swift here: the flags are set after.
        _ = fcntl(accepted, F_SETFL, fcntl(accepted, F_GETFL) | O_NONBLOCK)
        _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
        guard let peer = L2CAPSocketAddress(bytes: Array(storage.prefix(Int(length)))) else {
            throw L2CAPTransportError(.io, message: "an accepted channel without a Bluetooth address")
        }
        return try Self.describe(descriptor, psm: listener.psm, peer: peer.endpoint)
    }

    /// Nothing to do: closing the listening socket unpublishes the PSM.
    public func stopListening(_ listener: L2CAPListener) {}

    // MARK: Socket calls

    private static func openSocket(
        local: L2CAPEndpoint, psm: UInt16, security: L2CAPSecurity, mtu: UInt16?
    ) throws(L2CAPTransportError) -> FileDescriptor {
        let raw = Glibc.socket(
            Int32(L2CAPSocketAddress.family),
            Int32(SOCK_SEQPACKET.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), btprotoL2CAP)
        guard raw >= 0 else { throw L2CAPTransportError(errno: errno, during: "opening an L2CAP socket") }
        let socket = FileDescriptor(owning: raw)
        var address = L2CAPSocketAddress(psm: psm, endpoint: local).bytes
        let bound = withSocketAddress(&address) { pointer, length in bind(raw, pointer, length) }
        guard bound == 0 else {
            let what = psm == 0 ? "binding to \(local)" : "binding PSM \(psm) on \(local)"
            throw L2CAPTransportError(errno: errno, during: what)
        }
        // struct bt_security { uint8_t level; uint8_t key_size; }
        var level: (UInt8, UInt8) = (security.rawValue, 0)
        guard setsockopt(raw, solBluetooth, btSecurity, &level, 2) == 0 else {
            throw L2CAPTransportError(errno: errno, during: "setting the security level")
        }
        if var mtu {
            guard setsockopt(raw, solBluetooth, btReceiveMTU, &mtu, 2) == 0 else {
                throw L2CAPTransportError(errno: errno, during: "setting the receive MTU to \(mtu)")
            }
        }
        return socket
    }

    private static func describe(_ descriptor: FileDescriptor, psm: UInt16, peer: L2CAPEndpoint)
        throws(L2CAPTransportError) -> L2CAPSocket
    {
        let send = try option(descriptor.rawValue, btSendMTU, "send MTU")
        let receive = try option(descriptor.rawValue, btReceiveMTU, "receive MTU")
        return L2CAPSocket(descriptor: descriptor, psm: psm, peer: peer, sendMTU: send, receiveMTU: receive)
    }

    private static func option(_ fd: Int32, _ name: Int32, _ what: String) throws(L2CAPTransportError) -> Int {
        var value: UInt16 = 0
        var length = socklen_t(2)
        guard getsockopt(fd, solBluetooth, name, &value, &length) == 0 else {
            throw L2CAPTransportError(errno: errno, during: "reading the \(what)")
        }
        return Int(value)
    }

    private static func address(of fd: Int32, peer: Bool) -> L2CAPSocketAddress? {
        var storage = [UInt8](repeating: 0, count: 32)
        var length = socklen_t(storage.count)
        let result = withSocketAddress(&storage) { pointer, _ in
            peer ? getpeername(fd, pointer, &length) : getsockname(fd, pointer, &length)
        }
        guard result == 0 else { return nil }
        return L2CAPSocketAddress(bytes: Array(storage.prefix(Int(length))))
    }

    /// Runs `call` with `bytes` as a `sockaddr` and its size (`EINVAL` for an empty buffer).
    private static func withSocketAddress(
        _ bytes: inout [UInt8], _ call: (UnsafeMutablePointer<sockaddr>, socklen_t) -> Int32
    ) -> Int32 {
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else {
                errno = EINVAL
                return -1
            }
            return call(base.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
    }
}
